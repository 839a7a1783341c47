/* True peak through FFmpeg's libswresample (see true_peak.h).
 *
 * The pipeline for each slice of at most SLICE_FRAMES frames: interleaved float ->
 * planar float (scanned for the sample peak) -> swresample, oversampling every channel
 * -> planar float at the oversampled rate (scanned for the peak). Slices keep the buffers
 * small enough to stay in the cache; memory does not grow with the stream's length.
 *
 * Peaks are kept as the bit patterns of the absolute values: for floats that are not NaN,
 * the order of those patterns as unsigned integers is the order of the values, and an
 * integer maximum over an array is a loop compilers turn into vector instructions.
 */
#include "true_peak.h"
#include "ffmpeg_library.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input frames converted per swr_convert call. */
#define SLICE_FRAMES 4096
/* The interpolator's length at the oversampled rate; swresample's filter_size counts
   input samples, so it is this divided by the factor. 64 taps at 4x (16 per phase) is a
   little longer than BS.1770-4's example interpolator (48 taps, 12 per phase) and than
   libebur128's (49 taps), whose readings it matches: within 0.01 dB on sines, within
   0.1 dB on white noise. Much longer filters (swresample's default filter_size of 32 at
   4x) let through more of the band just below the Nyquist frequency, which these
   reference interpolators roll off, and read full-band white noise up to 1.5 dB higher;
   they also cost more (the filter is most of the meter's time). */
#define OVERSAMPLED_TAPS 64
/* swresample's Kaiser window parameter (its default). */
#define KAISER_BETA 9.0
/* Silent frames fed before the first frame and after the last: longer than the filter,
   so the interpolator starts from silence and rings out into silence completely (rather
   than mirroring the stream's edges, which is what swresample does by itself). */
#define SILENT_FRAMES (2 * OVERSAMPLED_TAPS)

/* The absolute value bits of the largest float that is not NaN (infinity). */
#define INFINITY_BITS 0x7f800000u

struct earshot_true_peak {
    /* libswresample's and libavutil's functions. */
    const earshot_ffmpeg *ff;
    int channels;
    int factor;
    /* NULL when factor is 1: the true peak is the sample peak. */
    SwrContext *resampler;
    /* SLICE_FRAMES planar samples per channel. */
    float *input[EARSHOT_TRUE_PEAK_MAX_CHANNELS];
    /* output_capacity planar samples per channel at the oversampled rate. */
    float *output[EARSHOT_TRUE_PEAK_MAX_CHANNELS];
    int output_capacity;
    /* The largest absolute value per channel, as float bits. */
    uint32_t peak[EARSHOT_TRUE_PEAK_MAX_CHANNELS];
    int finished;
};

static earshot_true_peak_status fail(char *message, size_t message_size, earshot_true_peak_status status,
                                     const char *format, ...)
{
    if (message != NULL && message_size > 0) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(message, message_size, format, arguments);
        va_end(arguments);
    }
    return status;
}

static earshot_true_peak_status fail_av(const earshot_true_peak *meter, char *message, size_t message_size,
                                        const char *what, int error)
{
    char text[AV_ERROR_MAX_STRING_SIZE] = { 0 };
    meter->ff->av_strerror(error, text, sizeof text);
    return fail(message, message_size, EARSHOT_TRUE_PEAK_FAILED, "%s: %s", what, text);
}

int earshot_true_peak_factor(int sample_rate)
{
    if (sample_rate < 96000) {
        return 4;
    }
    if (sample_rate < 192000) {
        return 2;
    }
    return 1;
}

/* The largest of `peak` and the absolute values of `count` samples, as float bits; NaN
   samples count as 0. */
static uint32_t peak_bits(const float *samples, size_t count, uint32_t peak)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &samples[i], sizeof bits);
        bits &= 0x7fffffffu;
        bits = bits > INFINITY_BITS ? 0 : bits;
        peak = bits > peak ? bits : peak;
    }
    return peak;
}

static double bits_value(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Room for `count` floats, aligned for the vector loops (as av_malloc aligns); NULL if out
   of memory. */
static float *aligned_floats(size_t count)
{
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes > 0 ? bytes : 64);
}

/* Makes room for `samples` samples per channel in the output planes. */
static earshot_true_peak_status reserve_output(earshot_true_peak *meter, int samples, char *message,
                                               size_t message_size)
{
    if (samples <= meter->output_capacity) {
        return EARSHOT_TRUE_PEAK_OK;
    }
    for (int channel = 0; channel < meter->channels; channel++) {
        free(meter->output[channel]);
        meter->output[channel] = NULL;
    }
    meter->output_capacity = 0;
    for (int channel = 0; channel < meter->channels; channel++) {
        meter->output[channel] = aligned_floats((size_t)samples);
        if (meter->output[channel] == NULL) {
            return fail(message, message_size, EARSHOT_TRUE_PEAK_FAILED, "out of memory for the oversampled audio");
        }
    }
    meter->output_capacity = samples;
    return EARSHOT_TRUE_PEAK_OK;
}

/* Oversamples `frames` frames from the input planes (none: drains the resampler) and
   scans the result. */
static earshot_true_peak_status oversample(earshot_true_peak *meter, int frames, char *message, size_t message_size)
{
    for (;;) {
        int room = meter->ff->swr_get_out_samples(meter->resampler, frames);
        if (room < 0) {
            return fail_av(meter, message, message_size, "swresample", room);
        }
        if (room == 0 && frames == 0) {
            return EARSHOT_TRUE_PEAK_OK;
        }
        /* With room for swr_get_out_samples' bound, all the input goes through at once. */
        earshot_true_peak_status status = reserve_output(meter, room > 0 ? room : 1, message, message_size);
        if (status != EARSHOT_TRUE_PEAK_OK) {
            return status;
        }
        int converted = meter->ff->swr_convert(meter->resampler, (uint8_t **)meter->output, meter->output_capacity,
                                    frames > 0 ? (const uint8_t **)meter->input : NULL, frames);
        if (converted < 0) {
            return fail_av(meter, message, message_size, "swresample", converted);
        }
        for (int channel = 0; channel < meter->channels; channel++) {
            meter->peak[channel] = peak_bits(meter->output[channel], (size_t)converted, meter->peak[channel]);
        }
        /* Input is consumed in one call; draining repeats until nothing more comes out. */
        if (frames > 0 || converted == 0) {
            return EARSHOT_TRUE_PEAK_OK;
        }
    }
}

/* Feeds `frames` (at most SLICE_FRAMES) silent frames. */
static earshot_true_peak_status add_silence(earshot_true_peak *meter, int frames, char *message, size_t message_size)
{
    for (int channel = 0; channel < meter->channels; channel++) {
        memset(meter->input[channel], 0, (size_t)frames * sizeof(float));
    }
    return oversample(meter, frames, message, message_size);
}

static earshot_true_peak_status open_resampler(earshot_true_peak *meter, int sample_rate, char *message,
                                               size_t message_size)
{
    meter->resampler = meter->ff->swr_alloc();
    if (meter->resampler == NULL) {
        return fail(message, message_size, EARSHOT_TRUE_PEAK_FAILED, "out of memory for swresample");
    }
    AVChannelLayout layout;
    meter->ff->av_channel_layout_default(&layout, meter->channels);
    SwrContext *resampler = meter->resampler;
    int error = 0;
    /* Same layout in and out: no remixing, every channel on its own. */
    error = error < 0 ? error : meter->ff->av_opt_set_chlayout(resampler, "in_chlayout", &layout, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_chlayout(resampler, "out_chlayout", &layout, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "in_sample_rate", sample_rate, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "out_sample_rate", (int64_t)sample_rate * meter->factor, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_sample_fmt(resampler, "in_sample_fmt", AV_SAMPLE_FMT_FLTP, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_sample_fmt(resampler, "out_sample_fmt", AV_SAMPLE_FMT_FLTP, 0);
    /* swresample's own engine, a Kaiser-windowed sinc (cut off at the input's Nyquist
       frequency when upsampling), with exactly one filter phase per output sample: with
       exact_rational the phase count shrinks to the factor, so no phase is interpolated. */
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "resampler", SWR_ENGINE_SWR, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "filter_type", SWR_FILTER_TYPE_KAISER, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_double(resampler, "kaiser_beta", KAISER_BETA, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "filter_size", OVERSAMPLED_TAPS / meter->factor, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "phase_shift", 10, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "exact_rational", 1, 0);
    error = error < 0 ? error : meter->ff->av_opt_set_int(resampler, "linear_interp", 0, 0);
    meter->ff->av_channel_layout_uninit(&layout);
    if (error < 0) {
        return fail_av(meter, message, message_size, "configuring swresample", error);
    }
    error = meter->ff->swr_init(resampler);
    if (error < 0) {
        return fail_av(meter, message, message_size, "starting swresample", error);
    }
    return add_silence(meter, SILENT_FRAMES, message, message_size);
}

earshot_true_peak_status earshot_true_peak_create(earshot_true_peak **meter, int channels, int sample_rate,
                                                  char *message, size_t message_size)
{
    *meter = NULL;
    if (message != NULL && message_size > 0) {
        message[0] = '\0';
    }
    if (channels < 1 || channels > EARSHOT_TRUE_PEAK_MAX_CHANNELS) {
        return fail(message, message_size, EARSHOT_TRUE_PEAK_INVALID, "%d channels (1 to %d can be measured)",
                    channels, EARSHOT_TRUE_PEAK_MAX_CHANNELS);
    }
    if (sample_rate < 1) {
        return fail(message, message_size, EARSHOT_TRUE_PEAK_INVALID, "sample rate %d", sample_rate);
    }
    const earshot_ffmpeg *ff = earshot_ffmpeg_acquire(message, message_size);
    if (ff == NULL) {
        return EARSHOT_TRUE_PEAK_FAILED;
    }
    earshot_true_peak *made = calloc(1, sizeof *made);
    if (made == NULL) {
        earshot_ffmpeg_release();
        return fail(message, message_size, EARSHOT_TRUE_PEAK_FAILED, "out of memory for the true-peak meter");
    }
    made->ff = ff;
    made->channels = channels;
    made->factor = earshot_true_peak_factor(sample_rate);
    earshot_true_peak_status status = EARSHOT_TRUE_PEAK_OK;
    for (int channel = 0; channel < channels && status == EARSHOT_TRUE_PEAK_OK; channel++) {
        made->input[channel] = aligned_floats(SLICE_FRAMES);
        if (made->input[channel] == NULL) {
            status = fail(message, message_size, EARSHOT_TRUE_PEAK_FAILED, "out of memory for the true-peak meter");
        }
    }
    if (status == EARSHOT_TRUE_PEAK_OK && made->factor > 1) {
        status = open_resampler(made, sample_rate, message, message_size);
    }
    if (status != EARSHOT_TRUE_PEAK_OK) {
        earshot_true_peak_destroy(made);
        return status;
    }
    *meter = made;
    return EARSHOT_TRUE_PEAK_OK;
}

earshot_true_peak_status earshot_true_peak_add_frames_float(earshot_true_peak *meter, const float *interleaved,
                                                            size_t frames, char *message, size_t message_size)
{
    if (meter->finished) {
        return fail(message, message_size, EARSHOT_TRUE_PEAK_FAILED, "the true-peak meter is finished");
    }
    const int channels = meter->channels;
    while (frames > 0) {
        int slice = frames < SLICE_FRAMES ? (int)frames : SLICE_FRAMES;
        for (int channel = 0; channel < channels; channel++) {
            float *plane = meter->input[channel];
            const float *source = interleaved + channel;
            for (int frame = 0; frame < slice; frame++) {
                plane[frame] = source[(size_t)frame * (size_t)channels];
            }
            meter->peak[channel] = peak_bits(plane, (size_t)slice, meter->peak[channel]);
        }
        if (meter->resampler != NULL) {
            earshot_true_peak_status status = oversample(meter, slice, message, message_size);
            if (status != EARSHOT_TRUE_PEAK_OK) {
                return status;
            }
        }
        interleaved += (size_t)slice * (size_t)channels;
        frames -= (size_t)slice;
    }
    return EARSHOT_TRUE_PEAK_OK;
}

earshot_true_peak_status earshot_true_peak_finish(earshot_true_peak *meter, char *message, size_t message_size)
{
    if (meter->finished) {
        return EARSHOT_TRUE_PEAK_OK;
    }
    meter->finished = 1;
    if (meter->resampler == NULL) {
        return EARSHOT_TRUE_PEAK_OK;
    }
    earshot_true_peak_status status = add_silence(meter, SILENT_FRAMES, message, message_size);
    if (status != EARSHOT_TRUE_PEAK_OK) {
        return status;
    }
    return oversample(meter, 0, message, message_size);
}

double earshot_true_peak_channel(const earshot_true_peak *meter, int channel)
{
    if (channel < 0 || channel >= meter->channels) {
        return 0;
    }
    return bits_value(meter->peak[channel]);
}

double earshot_true_peak_max(const earshot_true_peak *meter)
{
    uint32_t highest = 0;
    for (int channel = 0; channel < meter->channels; channel++) {
        highest = meter->peak[channel] > highest ? meter->peak[channel] : highest;
    }
    return bits_value(highest);
}

void earshot_true_peak_destroy(earshot_true_peak *meter)
{
    if (meter == NULL) {
        return;
    }
    if (meter->resampler != NULL) {
        meter->ff->swr_free(&meter->resampler);
    }
    for (int channel = 0; channel < EARSHOT_TRUE_PEAK_MAX_CHANNELS; channel++) {
        free(meter->input[channel]);
        free(meter->output[channel]);
    }
    free(meter);
    earshot_ffmpeg_release();
}

int earshot_true_peak_close_libraries(void)
{
    return earshot_ffmpeg_close_unused();
}
