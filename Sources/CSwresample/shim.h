#ifndef EARSHOT_CSWRESAMPLE_SHIM_H
#define EARSHOT_CSWRESAMPLE_SHIM_H
#include <libswresample/swresample.h>
#include <libavutil/opt.h>
#endif
