// PipeWire's echo canceller as its module-echo-cancel runs it: the SPA plugin
// (libspa-0.2-modules' aec/libspa-aec-webrtc.so) opened with dlopen, made with the
// module's arguments (none: the plugin's defaults) and run on blocks of the microphone and
// of what plays. For the echo benchmark's peer.
#ifndef EARSHOT_SPA_ECHO_CANCEL_H
#define EARSHOT_SPA_ECHO_CANCEL_H

#include <stddef.h>

typedef struct earshot_spa_aec earshot_spa_aec;

/// Opens the plugin at `path` and makes a mono canceller at `rate`; NULL with `error`
/// filled in when it cannot.
earshot_spa_aec *earshot_spa_aec_open(const char *path, unsigned rate, char *error, size_t error_size);

/// The block the module runs it on (the plugin's latency at `rate`), in samples.
unsigned earshot_spa_aec_block(const earshot_spa_aec *canceller);

/// One block of `count` samples: `recorded` (the microphone) less the echo of `played`,
/// into `output`. Negative on failure.
int earshot_spa_aec_run(earshot_spa_aec *canceller, const float *recorded, const float *played, float *output, unsigned count);

void earshot_spa_aec_close(earshot_spa_aec *canceller);

#endif
