#ifndef EARSHOT_PIPEWIRE_H
#define EARSHOT_PIPEWIRE_H

#include <stddef.h>
#include <stdint.h>

/* A client of the PipeWire daemon that follows its registry and sets stream volumes, on a
   thread loop of its own.

   It follows nodes (playback and capture streams, sinks and sources), clients (for the
   process id behind a stream), the "default" metadata (the default sink and source) and,
   when the `link` callback is set, links between nodes.
   Every callback runs on the mixer's own thread, with the mixer's lock held: a callback
   must copy what it needs and return, and must not call earshot_pw_mixer_set or
   earshot_pw_mixer_sync. Strings passed to callbacks are valid only during the call.

   When the daemon goes away, every node and client is reported removed, `state` reports
   the loss, and the mixer tries to connect again every `retry_ms` until the daemon is
   back, when `state` reports the new connection once the registry has been read. */
typedef struct earshot_pw_mixer earshot_pw_mixer;

typedef enum earshot_pw_node_kind {
    EARSHOT_PW_PLAYBACK = 1, /* Stream/Output/Audio */
    EARSHOT_PW_CAPTURE = 2,  /* Stream/Input/Audio */
    EARSHOT_PW_SINK = 3,     /* Audio/Sink */
    EARSHOT_PW_SOURCE = 4,   /* Audio/Source, Audio/Source/Virtual */
} earshot_pw_node_kind;

/* The most channels a stream's levels are followed for; a stream with more is reported
   with none (n_channels 0), and left alone. */
#define EARSHOT_PW_MAX_CHANNELS 32

typedef struct earshot_pw_node {
    uint32_t id;
    uint64_t serial;         /* object.serial: unique for the daemon's life, 0 when absent */
    earshot_pw_node_kind kind;
    uint32_t client_id;      /* client.id, 0 when absent */
    int32_t pid;             /* application.process.id on the node itself, 0 when absent */
    const char *name;        /* node.name, "" when absent */
    const char *description; /* node.description, else media.name, else "" */
    const char *application; /* application.name, "" when absent */
    const char *role;        /* media.role, "" when absent */
    const char *stream_key;  /* earshot.stream (a key a program and its children set in
                                PIPEWIRE_PROPS or PULSE_PROP), "" when absent */
    int has_volume;          /* whether the stream's Props have been read */
    float volume;            /* Props.volume: the stream's master gain */
    int mute;                /* Props.mute */
    /* Props.channelVolumes (the stream's own levels, as its user and WirePlumber set them)
       and Props.softVolumes and softMute (what is applied instead once they are set, and
       what WirePlumber does not store). n_channels is 0 until read. */
    uint32_t n_channels;
    float channel_volumes[EARSHOT_PW_MAX_CHANNELS];
    uint32_t n_soft;
    float soft_volumes[EARSHOT_PW_MAX_CHANNELS];
    int soft_mute;
} earshot_pw_node;

typedef struct earshot_pw_callbacks {
    /* connected = 1: attached, the registry read; 0: the connection is lost or could not
       be made (message says why). */
    void (*state)(void *user, int connected, const char *message);
    /* A node appeared or changed. */
    void (*node)(void *user, const earshot_pw_node *node);
    void (*node_removed)(void *user, uint32_t id);
    /* A client: its process id (pipewire.sec.pid, else application.process.id; 0 when
       unknown), application.name, and whether it speaks for programs of its own
       (client.api "pipewire-pulse": each PulseAudio program is a client of the
       pipewire-pulse process, whose id is then pid; the program's own is on its nodes). */
    void (*client)(void *user, uint32_t id, int32_t pid, const char *application, int proxy);
    void (*client_removed)(void *user, uint32_t id);
    /* "sink" or "source": the node name the daemon uses by default, NULL when none. */
    void (*default_node)(void *user, const char *which, const char *name);
    /* Optional (NULL: links are not followed): a link from one node's output ports to
       another node's input ports, as link.output.node and link.input.node say (0 when
       absent), and its removal. */
    void (*link)(void *user, uint32_t id, uint32_t output_node, uint32_t input_node);
    void (*link_removed)(void *user, uint32_t id);
} earshot_pw_callbacks;

/* Whether a PipeWire daemon accepts connections on `remote` (NULL: $PIPEWIRE_REMOTE, else
   "pipewire-0") in $PIPEWIRE_RUNTIME_DIR, else $XDG_RUNTIME_DIR. 0 when it does, else a
   negative errno. Does not start a thread. */
int earshot_pw_probe(const char *remote);

/* The path of the socket `earshot_pw_probe` tries, written into `path` (`size` bytes).
   0, or -ENOENT when no runtime directory is set, -ENAMETOOLONG when it does not fit. */
int earshot_pw_socket_path(const char *remote, char *path, size_t size);

/* Starts the mixer's thread and its first connection attempt, opening libpipewire-0.3 the
   first time. `callbacks` is copied. Returns NULL only when the library cannot be opened or
   the thread or context cannot be made, with the reason in `message` (NUL-terminated, at
   most `message_size` bytes). */
earshot_pw_mixer *earshot_pw_mixer_new(const char *remote, const char *client_name,
                                       const earshot_pw_callbacks *callbacks, void *user, int retry_ms,
                                       char *message, size_t message_size);

/* Sets a playback stream's master volume (volume < 0: unchanged) and mute (mute < 0:
   unchanged). 0 when sent; -ENOENT when no such playback stream is known; -ENOTCONN when
   not connected. */
int earshot_pw_mixer_set(earshot_pw_mixer *mixer, uint32_t id, float volume, int mute);

/* Sets a playback stream's software levels: softVolumes (n values, one per channel) and
   softMute. Once set they are applied instead of the stream's own channelVolumes and mute
   (its master volume still applies), until anyone sets those again; WirePlumber does not
   store them. Same results as earshot_pw_mixer_set, and -EINVAL when n is 0 or too many. */
int earshot_pw_mixer_set_soft(earshot_pw_mixer *mixer, uint32_t id, const float *volumes, uint32_t n, int mute);

/* Waits until the daemon has handled everything sent so far (a core sync), at most
   `timeout_ms`. 0 when it has; -ETIMEDOUT; -ENOTCONN. Never call from a callback. */
int earshot_pw_mixer_sync(earshot_pw_mixer *mixer, int timeout_ms);

/* Stops the thread, disconnects and frees. No callback runs after it returns. */
void earshot_pw_mixer_free(earshot_pw_mixer *mixer);

#endif
