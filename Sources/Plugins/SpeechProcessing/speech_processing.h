#ifndef EARSHOT_SPEECH_PROCESSING_H
#define EARSHOT_SPEECH_PROCESSING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Echo cancellation and noise suppression for a microphone, by WebRTC's audio processing
   module (the engine PipeWire's echo-cancel module uses), built as the plugin
   libEarshotSpeechProcessing.so and loaded at the first pass-thru that asks for it.

   Audio goes in 10 ms frames of mono float samples in [-1, 1]: `earshot_speech_frame_size`
   samples each. The far end (what the speakers play) is given frame by frame as it is
   played, the near end (what the microphone hears) as it is read, each far frame before
   the near frame read at the same time. One processor is used from one thread at a time. */
typedef struct earshot_speech_processor earshot_speech_processor;

/* How hard noise is suppressed. */
typedef enum earshot_noise_suppression {
    EARSHOT_NOISE_OFF = 0,
    EARSHOT_NOISE_MODERATE = 1,
    EARSHOT_NOISE_HIGH = 2,
} earshot_noise_suppression;

/* Whether `rate` (frames per second) can be processed: 8000, 16000, 32000, 44100 or 48000
   (a 10 ms frame is a whole number of samples and the module accepts the rate). */
int earshot_speech_rate_supported(int rate);

/* Samples in one 10 ms frame at `rate`. */
int earshot_speech_frame_size(int rate);

/* A processor at `rate`, cancelling echo when `echo_cancel` is not 0 and suppressing
   noise at `noise`. NULL on failure, with a NUL-terminated reason in `message` (at most
   `message_size` bytes). */
earshot_speech_processor *earshot_speech_processor_new(int rate, int echo_cancel, earshot_noise_suppression noise,
                                                       char *message, size_t message_size);

void earshot_speech_processor_free(earshot_speech_processor *processor);

/* One frame of the far end. Returns 0, or the module's error code. */
int earshot_speech_processor_far(earshot_speech_processor *processor, const float *frame);

/* Processes one frame of the near end in place. `delay_ms` is the time from a far frame's
   being given to its sound's reaching the microphone, beyond what the caller has already
   aligned (0 when the far end is given aligned). Returns 0, or the module's error code. */
int earshot_speech_processor_near(earshot_speech_processor *processor, float *frame, int delay_ms);

/* The module's voice-activity decision for the last near frame (1: voice). */
int earshot_speech_processor_voice(const earshot_speech_processor *processor);

#ifdef __cplusplus
}
#endif

#endif
