#ifndef EARSHOT_CESPEAKNG_SHIM_H
#define EARSHOT_CESPEAKNG_SHIM_H
// libespeak-ng is opened at run time, when speech is first needed, not linked: a service
// that never speaks loads neither it nor what it depends on (libpcaudio, PulseAudio's
// client libraries, X11's). Only its types and constants come from its header.
#include <dlfcn.h>
#include <stddef.h>
#include <espeak-ng/speak_lib.h>

/// The entry points the alert voice uses, resolved from the opened library, and the
/// library's handle.
typedef struct {
    void *library;
    __typeof__(espeak_Initialize) *initialize;
    __typeof__(espeak_Terminate) *terminate;
    __typeof__(espeak_SetSynthCallback) *setSynthCallback;
    __typeof__(espeak_SetVoiceByName) *setVoiceByName;
    __typeof__(espeak_SetParameter) *setParameter;
    __typeof__(espeak_Synth) *synth;
} earshot_espeak;

/// Opens libespeak-ng and fills `api`. Returns NULL when it worked, otherwise what failed
/// (dlerror's text, valid until the next dl* call on this thread). The library stays open
/// until earshot_espeak_close.
static inline const char *earshot_espeak_open(earshot_espeak *api) {
    void *library = dlopen("libespeak-ng.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return dlerror();
    api->library = library;
    api->initialize = (__typeof__(espeak_Initialize) *)dlsym(library, "espeak_Initialize");
    api->terminate = (__typeof__(espeak_Terminate) *)dlsym(library, "espeak_Terminate");
    api->setSynthCallback = (__typeof__(espeak_SetSynthCallback) *)dlsym(library, "espeak_SetSynthCallback");
    api->setVoiceByName = (__typeof__(espeak_SetVoiceByName) *)dlsym(library, "espeak_SetVoiceByName");
    api->setParameter = (__typeof__(espeak_SetParameter) *)dlsym(library, "espeak_SetParameter");
    api->synth = (__typeof__(espeak_Synth) *)dlsym(library, "espeak_Synth");
    if (!api->initialize || !api->terminate || !api->setSynthCallback || !api->setVoiceByName || !api->setParameter || !api->synth) {
        dlclose(library);
        return "libespeak-ng.so.1 lacks an espeak_* function";
    }
    return NULL;
}

/// Closes the library `api` was filled from (after espeak_Terminate, if it was
/// initialized); with no other user it is unmapped, with what it brought, and the next
/// earshot_espeak_open starts afresh.
static inline void earshot_espeak_close(earshot_espeak *api) {
    if (api->library != NULL) dlclose(api->library);
    *api = (earshot_espeak){0};
}
#endif
