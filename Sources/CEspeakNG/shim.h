#ifndef EARSHOT_CESPEAKNG_SHIM_H
#define EARSHOT_CESPEAKNG_SHIM_H
#include <espeak-ng/speak_lib.h>
#endif
