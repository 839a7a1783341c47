#ifndef EARSHOT_CALSA_SHIM_H
#define EARSHOT_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
