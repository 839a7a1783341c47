#ifndef EARSHOT_AAC_M4A_ENCODER_H
#define EARSHOT_AAC_M4A_ENCODER_H

#include <stddef.h>

/* How an AAC-in-M4A encoding ended. */
typedef enum earshot_aac_status {
    EARSHOT_AAC_OK = 0,
    /* The input cannot be opened or decoded by libsndfile, fails part-way, or has a
       shape the AAC encoder refuses (channel count). */
    EARSHOT_AAC_INVALID_AUDIO = 1,
    /* The output cannot be created or written, or an FFmpeg call failed. */
    EARSHOT_AAC_IO = 2,
} earshot_aac_status;

/* The rate used when the source's rate is not one AAC can encode. */
#define EARSHOT_AAC_FALLBACK_RATE 48000

/* Reads `input_path` with libsndfile (in chunks, as 32-bit float) and writes `output_path`
   as AAC-LC (FFmpeg's native "aac" encoder) in an M4A (MP4) container. The channel count
   is kept; so is the sample rate when AAC supports it, otherwise the audio is resampled to
   EARSHOT_AAC_FALLBACK_RATE. The bit rate is 96 kb/s for mono and 64 kb/s per channel
   otherwise, capped at what AAC allows at the rate. On failure, returns a status other
   than EARSHOT_AAC_OK and writes a NUL-terminated explanation into `message` (at most
   `message_size` bytes), and removes the output if it had opened it.
   Safe to call from several threads at once (each call has its own contexts). */
earshot_aac_status earshot_encode_aac_m4a(const char *input_path, const char *output_path,
                                          char *message, size_t message_size);

/* The sample rate the encoder writes for a source at `source_rate`. */
int earshot_aac_output_rate(int source_rate);

/* The bit rate (bits per second) the encoder uses for `channels` channels at `rate`. */
long earshot_aac_bit_rate(int channels, int rate);

#endif
