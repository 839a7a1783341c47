#ifndef EARSHOT_TRUE_PEAK_H
#define EARSHOT_TRUE_PEAK_H

#include <stddef.h>

/* The true peak (ITU-R BS.1770-4, Annex 2) of a stream of frames: every channel is
   oversampled and the largest absolute sample is kept (together with the largest input
   sample, as libebur128 does).

   Oversampling: 4x below 96 kHz, 2x from 96 kHz to below 192 kHz, none (the sample peak)
   from 192 kHz up, as libebur128 does. The interpolator is a polyphase Kaiser-windowed
   sinc (beta 9) cut off at the input's Nyquist frequency, 64 taps long at the oversampled
   rate (16 per phase at 4x, 32 at 2x), every phase scaled to pass a constant unchanged.
   The stream is measured as if silence surrounded it: the interpolator starts from
   silence and rings out into silence after the last frame.

   A meter belongs to one thread at a time; separate meters may be used on separate threads
   at once. */
typedef struct earshot_true_peak earshot_true_peak;

/* How a call ended. */
typedef enum earshot_true_peak_status {
    EARSHOT_TRUE_PEAK_OK = 0,
    /* The channel count (1 to 8) or rate (at least 1 Hz) cannot be measured. */
    EARSHOT_TRUE_PEAK_INVALID = 1,
    /* Out of memory, or the meter is finished. */
    EARSHOT_TRUE_PEAK_FAILED = 2,
} earshot_true_peak_status;

/* The most channels a meter measures. */
#define EARSHOT_TRUE_PEAK_MAX_CHANNELS 8

/* The oversampling factor used at `sample_rate`: 4, 2 or 1. */
int earshot_true_peak_factor(int sample_rate);

/* Makes a meter for `channels` channels at `sample_rate` Hz into `*meter`. On failure,
   leaves `*meter` NULL, returns a status other than EARSHOT_TRUE_PEAK_OK and writes a
   NUL-terminated explanation into `message` (at most `message_size` bytes). */
earshot_true_peak_status earshot_true_peak_create(earshot_true_peak **meter, int channels, int sample_rate,
                                                  char *message, size_t message_size);

/* Measures `frames` frames of interleaved float samples (full scale +-1). NaN samples, and
   the values interpolated next to them, are not peaks. Fails (with a message, as above) if the meter is finished. */
earshot_true_peak_status earshot_true_peak_add_frames_float(earshot_true_peak *meter, const float *interleaved,
                                                            size_t frames, char *message, size_t message_size);

/* Lets the interpolator ring out after the last frame. Call once, after the last
   earshot_true_peak_add_frames_float; the peaks are final afterwards. */
earshot_true_peak_status earshot_true_peak_finish(earshot_true_peak *meter, char *message, size_t message_size);

/* The true peak of `channel` so far (linear, full scale 1.0; 0 for silence or an
   out-of-range channel). */
double earshot_true_peak_channel(const earshot_true_peak *meter, int channel);

/* The highest true peak over the channels (linear). */
double earshot_true_peak_max(const earshot_true_peak *meter);

/* Releases the meter; NULL is ignored. */
void earshot_true_peak_destroy(earshot_true_peak *meter);

#endif
