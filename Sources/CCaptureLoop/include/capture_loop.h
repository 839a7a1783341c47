#ifndef EARSHOT_CAPTURE_LOOP_H
#define EARSHOT_CAPTURE_LOOP_H

/*
 * The least a capture service must do per chunk, written in C against libasound and
 * libdbus: read one chunk from a PCM, wrap it in an AudioPassThru-shaped signal
 * (ay data, t sequence, t monotonicUs) and send it unicast to one peer, paced in real
 * time (by the device, or by a clock of its own for a device that is not live). The capture benchmark runs it beside earshot-capture and arecord, so the CPU
 * cost of the service can be compared with the cost of the same work without Swift.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earshot_capture_loop_settings {
    const char *address;     /* the bus */
    const char *device;      /* the ALSA capture PCM */
    const char *destination; /* the unique name the chunks are sent to */
    unsigned rate;           /* Hz */
    unsigned channels;
    unsigned chunk_ms;       /* audio per signal */
    unsigned seconds;        /* how long to capture */
    int paced_by_device;     /* nonzero: the PCM delivers in real time, reads wait for it;
                                zero: sleep until each chunk is due (a PCM that is not live) */
} earshot_capture_loop_settings;

/*
 * Captures S16_LE audio for `seconds`, one signal per chunk. Returns the number of chunks
 * sent, or -1 with a message in `error` (at most `error_size` bytes with its NUL).
 */
long earshot_capture_loop_run(const earshot_capture_loop_settings *settings, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
