/* AAC-LC in M4A through FFmpeg's libraries, fed from libsndfile.
 *
 * The pipeline: sf_readf_float (interleaved float, READ_FRAMES at a time) -> swresample
 * (interleaved to planar float, and the rate change when AAC cannot encode the source's
 * rate) -> an AVAudioFifo that cuts the stream into the encoder's frame_size -> the
 * native "aac" encoder -> the "ipod" (M4A) muxer. Memory stays bounded by the chunk
 * size whatever the file's length.
 */
#include "aac_m4a_encoder.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libswresample/swresample.h>
#include <sndfile.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* Frames read from the input per sf_readf_float call. */
#define READ_FRAMES 16384
/* The AAC encoder's usual frame size, used if the encoder does not state one. */
#define DEFAULT_FRAME_SIZE 1024
/* Channels the contract accepts. */
#define MAX_CHANNELS 8

/* Everything one encoding owns; released by encoding_release whatever state it is in. */
typedef struct encoding {
    SNDFILE *input;
    SF_INFO info;
    AVFormatContext *muxer;
    AVStream *stream;
    AVCodecContext *encoder;
    SwrContext *resampler;
    AVAudioFifo *fifo;
    AVFrame *frame;
    AVPacket *packet;
    float *interleaved;
    uint8_t **planar;
    int planar_capacity;
    int frame_size;
    int64_t next_pts;
    char *message;
    size_t message_size;
} encoding;

static earshot_aac_status fail(encoding *e, earshot_aac_status status, const char *format, ...)
{
    if (e->message != NULL && e->message_size > 0) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(e->message, e->message_size, format, arguments);
        va_end(arguments);
    }
    return status;
}

static earshot_aac_status fail_av(encoding *e, earshot_aac_status status, const char *what, int error)
{
    char text[AV_ERROR_MAX_STRING_SIZE] = { 0 };
    av_strerror(error, text, sizeof text);
    return fail(e, status, "%s: %s", what, text);
}

/* FFmpeg logs at "info" by default: the encoder's quantizer average, the muxer's second
   pass. Failures come back as messages, so keep only warnings and errors on stderr (unless
   the process asked for less already). The level is process-wide; set once. */
static pthread_once_t quiet_logging_once = PTHREAD_ONCE_INIT;

static void quiet_logging(void)
{
    if (av_log_get_level() > AV_LOG_WARNING) {
        av_log_set_level(AV_LOG_WARNING);
    }
}

static const AVCodec *aac_encoder(void)
{
    return avcodec_find_encoder_by_name("aac");
}

int earshot_aac_output_rate(int source_rate)
{
    const AVCodec *codec = aac_encoder();
    if (codec == NULL || codec->supported_samplerates == NULL) {
        return EARSHOT_AAC_FALLBACK_RATE;
    }
    for (const int *rate = codec->supported_samplerates; *rate != 0; rate++) {
        if (*rate == source_rate) {
            return source_rate;
        }
    }
    return EARSHOT_AAC_FALLBACK_RATE;
}

long earshot_aac_bit_rate(int channels, int rate)
{
    long wanted = channels == 1 ? 96000L : 64000L * channels;
    /* The encoder's own limit: 6144 bits per channel per 1024-sample frame. */
    long ceiling = 6L * channels * rate;
    return wanted < ceiling ? wanted : ceiling;
}

static earshot_aac_status open_input(encoding *e, const char *input_path)
{
    e->input = sf_open(input_path, SFM_READ, &e->info);
    if (e->input == NULL) {
        return fail(e, EARSHOT_AAC_INVALID_AUDIO, "libsndfile cannot open the input: %s", sf_strerror(NULL));
    }
    if (e->info.channels < 1 || e->info.channels > MAX_CHANNELS) {
        return fail(e, EARSHOT_AAC_INVALID_AUDIO, "%d channels (1 to %d are accepted)", e->info.channels, MAX_CHANNELS);
    }
    if (e->info.samplerate <= 0) {
        return fail(e, EARSHOT_AAC_INVALID_AUDIO, "sample rate %d", e->info.samplerate);
    }
    e->interleaved = av_malloc_array((size_t)READ_FRAMES * (size_t)e->info.channels, sizeof(float));
    if (e->interleaved == NULL) {
        return fail(e, EARSHOT_AAC_IO, "out of memory for the read buffer");
    }
    return EARSHOT_AAC_OK;
}

static earshot_aac_status open_encoder(encoding *e, int output_rate)
{
    const AVCodec *codec = aac_encoder();
    if (codec == NULL) {
        return fail(e, EARSHOT_AAC_IO, "FFmpeg has no \"aac\" encoder");
    }
    e->encoder = avcodec_alloc_context3(codec);
    if (e->encoder == NULL) {
        return fail(e, EARSHOT_AAC_IO, "out of memory for the AAC encoder");
    }
    AVCodecContext *encoder = e->encoder;
    av_channel_layout_default(&encoder->ch_layout, e->info.channels);
    encoder->sample_rate = output_rate;
    encoder->sample_fmt = AV_SAMPLE_FMT_FLTP;
    encoder->bit_rate = earshot_aac_bit_rate(e->info.channels, output_rate);
    encoder->profile = FF_PROFILE_AAC_LOW;
    encoder->time_base = (AVRational){ 1, output_rate };
    if (e->muxer->oformat->flags & AVFMT_GLOBALHEADER) {
        encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    }
    int error = avcodec_open2(encoder, codec, NULL);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_INVALID_AUDIO, "the AAC encoder refuses this audio", error);
    }
    e->frame_size = encoder->frame_size > 0 ? encoder->frame_size : DEFAULT_FRAME_SIZE;

    e->frame = av_frame_alloc();
    e->packet = av_packet_alloc();
    if (e->frame == NULL || e->packet == NULL) {
        return fail(e, EARSHOT_AAC_IO, "out of memory for frames");
    }
    e->frame->format = AV_SAMPLE_FMT_FLTP;
    e->frame->sample_rate = output_rate;
    e->frame->nb_samples = e->frame_size;
    error = av_channel_layout_copy(&e->frame->ch_layout, &encoder->ch_layout);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "copying the channel layout", error);
    }
    error = av_frame_get_buffer(e->frame, 0);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "allocating a frame", error);
    }
    e->fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, e->info.channels, e->frame_size * 4);
    if (e->fifo == NULL) {
        return fail(e, EARSHOT_AAC_IO, "out of memory for the sample queue");
    }
    return EARSHOT_AAC_OK;
}

static earshot_aac_status open_resampler(encoding *e)
{
    AVCodecContext *encoder = e->encoder;
    int error = swr_alloc_set_opts2(&e->resampler,
                                    &encoder->ch_layout, AV_SAMPLE_FMT_FLTP, encoder->sample_rate,
                                    &encoder->ch_layout, AV_SAMPLE_FMT_FLT, e->info.samplerate,
                                    0, NULL);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "setting up swresample", error);
    }
    error = swr_init(e->resampler);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "starting swresample", error);
    }
    return EARSHOT_AAC_OK;
}

static earshot_aac_status open_output(encoding *e, const char *output_path)
{
    int error = avformat_alloc_output_context2(&e->muxer, NULL, "ipod", output_path);
    if (error < 0 || e->muxer == NULL) {
        return fail_av(e, EARSHOT_AAC_IO, "FFmpeg has no M4A muxer", error);
    }
    error = avio_open(&e->muxer->pb, output_path, AVIO_FLAG_WRITE);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "cannot create the output", error);
    }
    return EARSHOT_AAC_OK;
}

static earshot_aac_status write_header(encoding *e)
{
    e->stream = avformat_new_stream(e->muxer, NULL);
    if (e->stream == NULL) {
        return fail(e, EARSHOT_AAC_IO, "out of memory for the output stream");
    }
    e->stream->time_base = e->encoder->time_base;
    int error = avcodec_parameters_from_context(e->stream->codecpar, e->encoder);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "copying the encoder's parameters", error);
    }
    AVDictionary *options = NULL;
    /* The index (moov) before the samples, so players can start before the end arrives. */
    av_dict_set(&options, "movflags", "+faststart", 0);
    error = avformat_write_header(e->muxer, &options);
    av_dict_free(&options);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "writing the M4A header", error);
    }
    return EARSHOT_AAC_OK;
}

/* Sends `frame` (NULL to flush) and writes every packet the encoder has ready. */
static earshot_aac_status encode(encoding *e, AVFrame *frame)
{
    int error = avcodec_send_frame(e->encoder, frame);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "encoding AAC", error);
    }
    for (;;) {
        error = avcodec_receive_packet(e->encoder, e->packet);
        if (error == AVERROR(EAGAIN) || error == AVERROR_EOF) {
            return EARSHOT_AAC_OK;
        }
        if (error < 0) {
            return fail_av(e, EARSHOT_AAC_IO, "encoding AAC", error);
        }
        av_packet_rescale_ts(e->packet, e->encoder->time_base, e->stream->time_base);
        e->packet->stream_index = e->stream->index;
        error = av_interleaved_write_frame(e->muxer, e->packet);
        if (error < 0) {
            return fail_av(e, EARSHOT_AAC_IO, "writing the M4A output", error);
        }
    }
}

/* Encodes whole frames from the queue; with `drain`, also the last, shorter one. */
static earshot_aac_status encode_queued(encoding *e, int drain)
{
    for (;;) {
        int queued = av_audio_fifo_size(e->fifo);
        if (queued == 0 || (queued < e->frame_size && !drain)) {
            return EARSHOT_AAC_OK;
        }
        int error = av_frame_make_writable(e->frame);
        if (error < 0) {
            return fail_av(e, EARSHOT_AAC_IO, "preparing a frame", error);
        }
        int count = queued < e->frame_size ? queued : e->frame_size;
        e->frame->nb_samples = count;
        if (av_audio_fifo_read(e->fifo, (void **)e->frame->data, count) != count) {
            return fail(e, EARSHOT_AAC_IO, "the sample queue came up short");
        }
        e->frame->pts = e->next_pts;
        e->next_pts += count;
        earshot_aac_status status = encode(e, e->frame);
        if (status != EARSHOT_AAC_OK) {
            return status;
        }
    }
}

/* Makes room for `samples` planar samples per channel in e->planar. */
static earshot_aac_status reserve_planar(encoding *e, int samples)
{
    if (samples <= e->planar_capacity) {
        return EARSHOT_AAC_OK;
    }
    if (e->planar != NULL) {
        av_freep(&e->planar[0]);
        av_freep(&e->planar);
    }
    e->planar_capacity = 0;
    int error = av_samples_alloc_array_and_samples(&e->planar, NULL, e->info.channels, samples,
                                                   AV_SAMPLE_FMT_FLTP, 0);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "allocating the planar buffer", error);
    }
    e->planar_capacity = samples;
    return EARSHOT_AAC_OK;
}

/* Converts `frames` interleaved frames (none: flushes the resampler) into the queue. */
static earshot_aac_status convert(encoding *e, int frames)
{
    for (;;) {
        int room = swr_get_out_samples(e->resampler, frames);
        if (room < 0) {
            return fail_av(e, EARSHOT_AAC_IO, "swresample", room);
        }
        if (room == 0 && frames == 0) {
            return EARSHOT_AAC_OK;
        }
        /* Input must always go in: whatever does not fit, swresample keeps for later. */
        earshot_aac_status status = reserve_planar(e, room > 0 ? room : 1);
        if (status != EARSHOT_AAC_OK) {
            return status;
        }
        const uint8_t *source = (const uint8_t *)e->interleaved;
        int converted = swr_convert(e->resampler, e->planar, e->planar_capacity,
                                    frames > 0 ? &source : NULL, frames);
        if (converted < 0) {
            return fail_av(e, EARSHOT_AAC_IO, "swresample", converted);
        }
        if (converted > 0 && av_audio_fifo_write(e->fifo, (void **)e->planar, converted) != converted) {
            return fail(e, EARSHOT_AAC_IO, "out of memory for the sample queue");
        }
        /* Input is consumed in one call; a flush repeats until nothing more comes out. */
        if (frames > 0 || converted == 0) {
            return EARSHOT_AAC_OK;
        }
    }
}

static earshot_aac_status transcode(encoding *e)
{
    sf_count_t decoded = 0;
    for (;;) {
        sf_count_t got = sf_readf_float(e->input, e->interleaved, READ_FRAMES);
        if (got <= 0) {
            break;
        }
        decoded += got;
        earshot_aac_status status = convert(e, (int)got);
        if (status == EARSHOT_AAC_OK) {
            status = encode_queued(e, 0);
        }
        if (status != EARSHOT_AAC_OK) {
            return status;
        }
    }
    if (sf_error(e->input) != SF_ERR_NO_ERROR) {
        return fail(e, EARSHOT_AAC_INVALID_AUDIO, "decoding failed after %lld frames: %s",
                    (long long)decoded, sf_strerror(e->input));
    }
    if (e->info.frames != SF_COUNT_MAX && decoded < e->info.frames) {
        return fail(e, EARSHOT_AAC_INVALID_AUDIO, "decoding stopped after %lld of %lld frames",
                    (long long)decoded, (long long)e->info.frames);
    }
    if (decoded == 0) {
        return fail(e, EARSHOT_AAC_INVALID_AUDIO, "the input has no audio frames");
    }
    earshot_aac_status status = convert(e, 0);
    if (status == EARSHOT_AAC_OK) {
        status = encode_queued(e, 1);
    }
    if (status == EARSHOT_AAC_OK) {
        status = encode(e, NULL);
    }
    if (status != EARSHOT_AAC_OK) {
        return status;
    }
    int error = av_write_trailer(e->muxer);
    if (error < 0) {
        return fail_av(e, EARSHOT_AAC_IO, "finishing the M4A output", error);
    }
    return EARSHOT_AAC_OK;
}

static earshot_aac_status encoding_release(encoding *e, earshot_aac_status status, const char *output_path)
{
    if (e->muxer != NULL) {
        int opened = e->muxer->pb != NULL;
        int error = avio_closep(&e->muxer->pb);
        if (error < 0 && status == EARSHOT_AAC_OK) {
            status = fail_av(e, EARSHOT_AAC_IO, "closing the output", error);
        }
        avformat_free_context(e->muxer);
        /* Only a file this call opened (created or truncated) is removed. */
        if (opened && status != EARSHOT_AAC_OK) {
            unlink(output_path);
        }
    }
    avcodec_free_context(&e->encoder);
    swr_free(&e->resampler);
    if (e->fifo != NULL) {
        av_audio_fifo_free(e->fifo);
    }
    av_frame_free(&e->frame);
    av_packet_free(&e->packet);
    if (e->planar != NULL) {
        av_freep(&e->planar[0]);
        av_freep(&e->planar);
    }
    av_freep(&e->interleaved);
    if (e->input != NULL) {
        sf_close(e->input);
    }
    return status;
}

earshot_aac_status earshot_encode_aac_m4a(const char *input_path, const char *output_path,
                                          char *message, size_t message_size)
{
    pthread_once(&quiet_logging_once, quiet_logging);
    encoding e = { 0 };
    e.message = message;
    e.message_size = message_size;
    if (message != NULL && message_size > 0) {
        message[0] = '\0';
    }
    earshot_aac_status status = open_input(&e, input_path);
    if (status == EARSHOT_AAC_OK) {
        status = open_output(&e, output_path);
    }
    if (status == EARSHOT_AAC_OK) {
        status = open_encoder(&e, earshot_aac_output_rate(e.info.samplerate));
    }
    if (status == EARSHOT_AAC_OK) {
        status = open_resampler(&e);
    }
    if (status == EARSHOT_AAC_OK) {
        status = write_header(&e);
    }
    if (status == EARSHOT_AAC_OK) {
        status = transcode(&e);
    }
    return encoding_release(&e, status, output_path);
}
