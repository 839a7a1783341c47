#ifndef EARSHOT_CPIPEWIRE_SHIM_H
#define EARSHOT_CPIPEWIRE_SHIM_H
#include <pipewire/pipewire.h>
#endif
