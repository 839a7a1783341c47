/* The libswresample and libavutil functions the true-peak meter calls, opened at run time
   (see ffmpeg_library.c). */
#ifndef EARSHOT_FFMPEG_LIBRARY_H
#define EARSHOT_FFMPEG_LIBRARY_H

/* Headers only: the libraries are not linked. */
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/macros.h>
#include <libavutil/opt.h>
#include <libavutil/version.h>
#include <libswresample/swresample.h>
#include <libswresample/version_major.h>

#include <stddef.h>

typedef struct earshot_ffmpeg {
    __typeof__(swr_alloc) *swr_alloc;
    __typeof__(swr_init) *swr_init;
    __typeof__(swr_get_out_samples) *swr_get_out_samples;
    __typeof__(swr_convert) *swr_convert;
    __typeof__(swr_free) *swr_free;
    __typeof__(av_strerror) *av_strerror;
    __typeof__(av_channel_layout_default) *av_channel_layout_default;
    __typeof__(av_channel_layout_uninit) *av_channel_layout_uninit;
    __typeof__(av_opt_set_chlayout) *av_opt_set_chlayout;
    __typeof__(av_opt_set_int) *av_opt_set_int;
    __typeof__(av_opt_set_double) *av_opt_set_double;
    __typeof__(av_opt_set_sample_fmt) *av_opt_set_sample_fmt;
} earshot_ffmpeg;

/* The functions, opening the libraries if they are closed (from any thread). NULL if they
   cannot be opened; then `message` (at most `message_size` bytes) says why. The functions
   stay valid until the matching earshot_ffmpeg_release. */
const earshot_ffmpeg *earshot_ffmpeg_acquire(char *message, size_t message_size);

/* Ends one earshot_ffmpeg_acquire. */
void earshot_ffmpeg_release(void);

/* Closes the libraries if they are open and nothing holds them; returns whether it did. */
int earshot_ffmpeg_close_unused(void);

#endif
