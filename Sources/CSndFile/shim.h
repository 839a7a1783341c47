#ifndef EARSHOT_CSNDFILE_SHIM_H
#define EARSHOT_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
