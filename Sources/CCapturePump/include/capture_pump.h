#ifndef EARSHOT_CAPTURE_PUMP_H
#define EARSHOT_CAPTURE_PUMP_H

/*
 * Writing capture reads straight to file descriptors (pipes) from the reading thread of
 * EarshotALSA's CaptureLoop, with the flag and the frame count that thread shares with
 * others. The count and the flag are C atomics so that the writes, which update the count,
 * and Swift code on any thread use one kind of atomic.
 *
 * (A C loop that also made the reads once lived here: it paid off only on a PCM whose
 * reads wait for the data, which no sound card's do; on ALSA's pipewire PCM the service
 * cost the same with and without it.)
 */

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
    unsigned char *buffer;             /* the read's frames */
    unsigned long frame_bytes;
    const int *descriptors;            /* non-blocking */
    int descriptor_count;
    uint64_t frames_left;              /* a read beyond is cut short, then writes stop */
    earshot_frame_count *counter;      /* counts every frame written */
    /* Set by the writes, added to across calls. */
    uint64_t frames_written;           /* written in full to every descriptor */
    /* Set when a write returns EARSHOT_PUMP_UNFINISHED. */
    unsigned long unfinished_bytes;    /* the read's bytes in buffer (cut at the limit) */
    unsigned long unfinished_frames;
    int unfinished_index;              /* the first descriptor that did not take them all */
    unsigned long unfinished_written;  /* how many of them it took */
    int unfinished_error;              /* its errno; 0 when it was only full */
} earshot_pump;

typedef enum earshot_pump_stop {
    EARSHOT_PUMP_LIMIT = 2,      /* frames_left reached 0 */
    EARSHOT_PUMP_UNFINISHED = 3  /* a descriptor did not take a read in full */
} earshot_pump_stop;

/*
 * Writes `frames` frames read into the buffer to every descriptor, cut at frames_left:
 * returns 0, EARSHOT_PUMP_LIMIT or EARSHOT_PUMP_UNFINISHED.
 */
int earshot_pump_write(earshot_pump *pump, unsigned long frames);

#ifdef __cplusplus
}
#endif

#endif
