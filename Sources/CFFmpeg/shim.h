#ifndef EARSHOT_CFFMPEG_SHIM_H
#define EARSHOT_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/opt.h>
#endif
