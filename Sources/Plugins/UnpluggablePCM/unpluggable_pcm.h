#ifndef EARSHOT_UNPLUGGABLE_PCM_H
#define EARSHOT_UNPLUGGABLE_PCM_H

#include <alsa/asoundlib.h>

/*
 * The entry point libasound looks up for a PCM of type `earshot_unpluggable` (see
 * unpluggable_pcm.c for the configuration it takes). Only libasound calls it.
 */
int _snd_pcm_earshot_unpluggable_open(snd_pcm_t **pcmp, const char *name, snd_config_t *root, snd_config_t *conf,
                                      snd_pcm_stream_t stream, int mode);

#endif
