#ifndef EARSHOT_CAPTURE_PUMP_H
#define EARSHOT_CAPTURE_PUMP_H

/*
 * The reading thread's loop for audio that goes straight from a capture PCM to file
 * descriptors (pipes), with nothing else to do per read: read a period, write it to every
 * descriptor, count it. Whatever else may happen (an error, nothing to read yet, a request
 * from another thread, a descriptor that does not take a read in full, the frame limit)
 * returns to the caller, EarshotALSA's CaptureLoop, which handles it as for any read.
 *
 * It is in C because, after a wake-up, every piece of memory a loop touches costs: the
 * Swift loop, with its callbacks, objects and reference counts, cost 30-40 % more per
 * wake-up than arecord; this loop touches what arecord touches, and costs what it costs.
 */

#include <alsa/asoundlib.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A flag set by any thread, read by the pump before each read. */
typedef struct earshot_pump_flag {
    int value;
} earshot_pump_flag;

void earshot_pump_flag_raise(earshot_pump_flag *flag);
/* Clears the flag; returns whether it was raised. */
int earshot_pump_flag_take(earshot_pump_flag *flag);
int earshot_pump_flag_is_raised(const earshot_pump_flag *flag);

/* A count of frames, added to by the pump, read by any thread. */
typedef struct earshot_frame_count {
    uint64_t value;
} earshot_frame_count;

uint64_t earshot_frame_count_load(const earshot_frame_count *count);
void earshot_frame_count_store(earshot_frame_count *count, uint64_t value);
void earshot_frame_count_add(earshot_frame_count *count, uint64_t frames);

typedef struct earshot_pump {
    /* Set by the caller. */
    snd_pcm_t *pcm;
    unsigned char *buffer;             /* period_frames * frame_bytes */
    unsigned long period_frames;
    unsigned long frame_bytes;
    unsigned char silence;             /* what a read leaves untouched is set to this */
    const int *descriptors;            /* non-blocking */
    int descriptor_count;
    uint64_t frames_left;              /* a read beyond is cut short, then the pump stops */
    earshot_frame_count *counter;      /* counts every frame written */
    earshot_pump_flag *attention;      /* raised: stop before the next read */
    /* Set by the pump, added to across calls. */
    uint64_t frames_written;           /* written in full to every descriptor */
    uint64_t frames_read;              /* read (written or, past the limit, dropped) */
    /* Set by the pump when it stops with EARSHOT_PUMP_UNFINISHED. */
    unsigned long unfinished_bytes;    /* the read's bytes in buffer (cut at the limit) */
    unsigned long unfinished_frames;
    int unfinished_index;              /* the first descriptor that did not take them all */
    unsigned long unfinished_written;  /* how many of them it took */
    int unfinished_error;              /* its errno; 0 when it was only full */
    /* Set by the pump when it stops with EARSHOT_PUMP_READ_RESULT. */
    long read_result;                  /* snd_pcm_readi's result: 0 or negative */
} earshot_pump;

typedef enum earshot_pump_stop {
    EARSHOT_PUMP_ATTENTION = 1,  /* the flag was raised */
    EARSHOT_PUMP_LIMIT = 2,      /* frames_left reached 0 */
    EARSHOT_PUMP_UNFINISHED = 3, /* a descriptor did not take a read in full */
    EARSHOT_PUMP_READ_RESULT = 4,/* a read brought no frames: read_result */
    EARSHOT_PUMP_READS_DONE = 5  /* the reads asked for were made */
} earshot_pump_stop;

/*
 * Reads and writes up to `reads` periods (0: no bound), stopping before that as above.
 * Each read asks for a whole period; the buffer is set to silence before it.
 */
earshot_pump_stop earshot_pump_run(earshot_pump *pump, unsigned long reads);

/*
 * Writes `frames` frames already read into the buffer, as the pump writes each read:
 * returns 0, EARSHOT_PUMP_LIMIT or EARSHOT_PUMP_UNFINISHED.
 */
int earshot_pump_write(earshot_pump *pump, unsigned long frames);

#ifdef __cplusplus
}
#endif

#endif
