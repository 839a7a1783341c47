#ifndef EARSHOT_CSAMPLERATE_SHIM_H
#define EARSHOT_CSAMPLERATE_SHIM_H
#include <samplerate.h>
#endif
