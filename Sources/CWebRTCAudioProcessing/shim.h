#ifndef EARSHOT_CWEBRTC_AUDIO_PROCESSING_SHIM_H
#define EARSHOT_CWEBRTC_AUDIO_PROCESSING_SHIM_H
/* WebRTC's audio processing module (libwebrtc-audio-processing-dev) has a C++ API only:
   CSpeechProcessing includes its headers and gives the services a C one. This target is
   here for its pkg-config flags (the include directory, WEBRTC_POSIX) and its library. */
#endif
