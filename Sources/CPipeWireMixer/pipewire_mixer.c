#include "earshot_pipewire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/props.h>
#include <spa/pod/builder.h>
#include <spa/pod/iter.h>
#include <spa/utils/json.h>

/* Last: the pw_ calls below go through the opened library's table. */
#include "pipewire_library.h"

/* One followed registry object: a node, a client, the "default" metadata or a link (links
   are not bound: their global's properties say all that is reported). */
enum object_type { OBJECT_NODE, OBJECT_CLIENT, OBJECT_METADATA, OBJECT_LINK };

struct object {
    struct spa_list link;
    struct earshot_pw_mixer *mixer;
    enum object_type type;
    uint32_t id;
    struct pw_proxy *proxy;
    struct spa_hook object_listener;
    /* Nodes */
    earshot_pw_node_kind kind;
    uint64_t serial;
    uint32_t client_id;
    int32_t pid;
    char *name, *description, *application, *role, *stream_key;
    int has_info, has_volume, mute, soft_mute;
    float volume;
    uint32_t n_channels, n_soft;
    float channel_volumes[EARSHOT_PW_MAX_CHANNELS], soft_volumes[EARSHOT_PW_MAX_CHANNELS];
    /* Links */
    uint32_t output_node, input_node;
};

struct earshot_pw_mixer {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct spa_source *timer;
    struct spa_list objects;
    earshot_pw_callbacks callbacks;
    void *user;
    char *remote;
    char *client_name;
    int retry_ms;
    /* The connection: attached once the registry has been read (two syncs). */
    int connected;
    int lost;
    int initial_sync;
    int pending_seq;
    int done_seq;
    int reported_failure;
    char default_sink[256], default_source[256];
};

static char *copy(const char *text) { return strdup(text ? text : ""); }

static void replace(char **field, const char *text) {
    free(*field);
    *field = copy(text);
}

static void schedule(struct earshot_pw_mixer *m, int ms) {
    struct timespec value = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L + 1 };
    pw_loop_update_timer(pw_thread_loop_get_loop(m->loop), m->timer, &value, NULL, false);
}

/* ---- objects ---- */

static void report_node(struct object *o) {
    if (!o->has_info || !o->mixer->callbacks.node) return;
    earshot_pw_node node = {
        .id = o->id, .serial = o->serial, .kind = o->kind, .client_id = o->client_id, .pid = o->pid,
        .name = o->name, .description = o->description, .application = o->application, .role = o->role,
        .stream_key = o->stream_key,
        .has_volume = o->has_volume, .volume = o->volume, .mute = o->mute,
        .n_channels = o->n_channels, .n_soft = o->n_soft, .soft_mute = o->soft_mute,
    };
    memcpy(node.channel_volumes, o->channel_volumes, sizeof(node.channel_volumes));
    memcpy(node.soft_volumes, o->soft_volumes, sizeof(node.soft_volumes));
    o->mixer->callbacks.node(o->mixer->user, &node);
}

static void destroy_object(struct object *o, int report) {
    struct earshot_pw_mixer *m = o->mixer;
    if (report) {
        if (o->type == OBJECT_NODE && o->has_info && m->callbacks.node_removed) m->callbacks.node_removed(m->user, o->id);
        if (o->type == OBJECT_CLIENT && m->callbacks.client_removed) m->callbacks.client_removed(m->user, o->id);
        if (o->type == OBJECT_LINK && m->callbacks.link_removed) m->callbacks.link_removed(m->user, o->id);
    }
    spa_list_remove(&o->link);
    if (o->proxy) {
        spa_hook_remove(&o->object_listener);
        pw_proxy_destroy(o->proxy);
    }
    free(o->name);
    free(o->description);
    free(o->application);
    free(o->role);
    free(o->stream_key);
    free(o);
}

static int32_t parse_positive(const char *text) {
    if (!text) return 0;
    char *end = NULL;
    long value = strtol(text, &end, 10);
    return (end && *end == '\0' && value > 0 && value < INT32_MAX) ? (int32_t)value : 0;
}

static void node_info(void *data, const struct pw_node_info *info) {
    struct object *o = data;
    if (!(info->change_mask & PW_NODE_CHANGE_MASK_PROPS) || !info->props) return;
    const struct spa_dict *props = info->props;
    const char *text;
    replace(&o->name, spa_dict_lookup(props, PW_KEY_NODE_NAME));
    text = spa_dict_lookup(props, PW_KEY_NODE_DESCRIPTION);
    if (!text) text = spa_dict_lookup(props, PW_KEY_MEDIA_NAME);
    replace(&o->description, text);
    replace(&o->application, spa_dict_lookup(props, PW_KEY_APP_NAME));
    replace(&o->role, spa_dict_lookup(props, PW_KEY_MEDIA_ROLE));
    replace(&o->stream_key, spa_dict_lookup(props, "earshot.stream"));
    o->client_id = (uint32_t)parse_positive(spa_dict_lookup(props, PW_KEY_CLIENT_ID));
    o->pid = parse_positive(spa_dict_lookup(props, PW_KEY_APP_PROCESS_ID));
    text = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
    if (text) o->serial = strtoull(text, NULL, 10);
    o->has_info = 1;
    report_node(o);
}

/* Reads a Props array of floats into `values`; its length, or 0 when it is not one or has
   more than EARSHOT_PW_MAX_CHANNELS values. */
static uint32_t read_floats(const struct spa_pod *value, float *values) {
    uint32_t n = 0, child_type = 0;
    const float *items = spa_pod_get_array(value, &n);
    if (!items || !spa_pod_is_array(value)) return 0;
    child_type = SPA_POD_ARRAY_VALUE_TYPE(value);
    if (child_type != SPA_TYPE_Float || n == 0 || n > EARSHOT_PW_MAX_CHANNELS) return 0;
    memcpy(values, items, n * sizeof(float));
    return n;
}

static int floats_differ(const float *a, uint32_t na, const float *b, uint32_t nb) {
    return na != nb || memcmp(a, b, na * sizeof(float)) != 0;
}

static void node_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    struct object *o = data;
    (void)seq; (void)index; (void)next;
    if (id != SPA_PARAM_Props || param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props)) return;
    const struct spa_pod_object *object = (const struct spa_pod_object *)param;
    const struct spa_pod_prop *prop;
    int changed = 0;
    SPA_POD_OBJECT_FOREACH(object, prop) {
        if (prop->key == SPA_PROP_volume) {
            float volume;
            if (spa_pod_get_float(&prop->value, &volume) == 0) {
                changed |= !o->has_volume || volume != o->volume;
                o->volume = volume;
                o->has_volume = 1;
            }
        } else if (prop->key == SPA_PROP_mute) {
            bool mute;
            if (spa_pod_get_bool(&prop->value, &mute) == 0) {
                changed |= o->mute != (int)mute;
                o->mute = mute;
            }
        } else if (prop->key == SPA_PROP_softMute) {
            bool mute;
            if (spa_pod_get_bool(&prop->value, &mute) == 0) {
                changed |= o->soft_mute != (int)mute;
                o->soft_mute = mute;
            }
        } else if (prop->key == SPA_PROP_channelVolumes || prop->key == SPA_PROP_softVolumes) {
            float values[EARSHOT_PW_MAX_CHANNELS];
            uint32_t n = read_floats(&prop->value, values);
            float *field = prop->key == SPA_PROP_channelVolumes ? o->channel_volumes : o->soft_volumes;
            uint32_t *count = prop->key == SPA_PROP_channelVolumes ? &o->n_channels : &o->n_soft;
            if (floats_differ(field, *count, values, n)) {
                memcpy(field, values, n * sizeof(float));
                *count = n;
                changed = 1;
            }
        }
    }
    if (changed) report_node(o);
}

static const struct pw_node_events node_events = {
    PW_VERSION_NODE_EVENTS,
    .info = node_info,
    .param = node_param,
};

static void client_info(void *data, const struct pw_client_info *info) {
    struct object *o = data;
    struct earshot_pw_mixer *m = o->mixer;
    if (!(info->change_mask & PW_CLIENT_CHANGE_MASK_PROPS) || !info->props) return;
    int32_t pid = parse_positive(spa_dict_lookup(info->props, PW_KEY_SEC_PID));
    if (pid == 0) pid = parse_positive(spa_dict_lookup(info->props, PW_KEY_APP_PROCESS_ID));
    const char *api = spa_dict_lookup(info->props, PW_KEY_CLIENT_API);
    int proxy = api != NULL && strcmp(api, "pipewire-pulse") == 0;
    if (m->callbacks.client) m->callbacks.client(m->user, o->id, pid, spa_dict_lookup(info->props, PW_KEY_APP_NAME), proxy);
}

static const struct pw_client_events client_events = {
    PW_VERSION_CLIENT_EVENTS,
    .info = client_info,
};

/* The node name in a metadata value such as { "name": "speakers" }. */
static void json_name(const char *value, char *name, size_t size) {
    name[0] = '\0';
    if (!value) return;
    struct spa_json it[2];
    spa_json_init(&it[0], value, strlen(value));
    if (spa_json_enter_object(&it[0], &it[1]) <= 0) return;
    char key[64];
    while (spa_json_get_string(&it[1], key, sizeof(key)) > 0) {
        if (strcmp(key, "name") == 0) {
            if (spa_json_get_string(&it[1], name, (int)size) <= 0) name[0] = '\0';
            return;
        }
        const char *skip;
        if (spa_json_next(&it[1], &skip) <= 0) return;
    }
}

static void report_default(struct earshot_pw_mixer *m, const char *which, char *current, const char *value) {
    char name[256];
    json_name(value, name, sizeof(name));
    if (strcmp(name, current) == 0) return;
    snprintf(current, 256, "%s", name);
    if (m->callbacks.default_node) m->callbacks.default_node(m->user, which, name[0] ? name : NULL);
}

static int metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    struct object *o = data;
    struct earshot_pw_mixer *m = o->mixer;
    (void)type;
    if (subject != PW_ID_CORE) return 0;
    if (key == NULL) {
        report_default(m, "sink", m->default_sink, NULL);
        report_default(m, "source", m->default_source, NULL);
    } else if (strcmp(key, "default.audio.sink") == 0) {
        report_default(m, "sink", m->default_sink, value);
    } else if (strcmp(key, "default.audio.source") == 0) {
        report_default(m, "source", m->default_source, value);
    }
    return 0;
}

static const struct pw_metadata_events metadata_events = {
    PW_VERSION_METADATA_EVENTS,
    .property = metadata_property,
};

static int node_kind(const char *media_class) {
    if (!media_class) return 0;
    if (strcmp(media_class, "Stream/Output/Audio") == 0) return EARSHOT_PW_PLAYBACK;
    if (strcmp(media_class, "Stream/Input/Audio") == 0) return EARSHOT_PW_CAPTURE;
    if (strcmp(media_class, "Audio/Sink") == 0) return EARSHOT_PW_SINK;
    if (strcmp(media_class, "Audio/Source") == 0 || strcmp(media_class, "Audio/Source/Virtual") == 0) return EARSHOT_PW_SOURCE;
    return 0;
}

static void registry_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                            const struct spa_dict *props) {
    struct earshot_pw_mixer *m = data;
    (void)permissions; (void)version;
    enum object_type object_type;
    int kind = 0;
    const void *events;
    const char *interface_type;
    uint32_t interface_version;
    if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
        kind = node_kind(props ? spa_dict_lookup(props, PW_KEY_MEDIA_CLASS) : NULL);
        if (!kind) return;
        object_type = OBJECT_NODE;
        events = &node_events;
        interface_type = PW_TYPE_INTERFACE_Node;
        interface_version = PW_VERSION_NODE;
    } else if (strcmp(type, PW_TYPE_INTERFACE_Client) == 0) {
        object_type = OBJECT_CLIENT;
        events = &client_events;
        interface_type = PW_TYPE_INTERFACE_Client;
        interface_version = PW_VERSION_CLIENT;
    } else if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0) {
        const char *name = props ? spa_dict_lookup(props, PW_KEY_METADATA_NAME) : NULL;
        if (!name || strcmp(name, "default") != 0) return;
        object_type = OBJECT_METADATA;
        events = &metadata_events;
        interface_type = PW_TYPE_INTERFACE_Metadata;
        interface_version = PW_VERSION_METADATA;
    } else if (strcmp(type, PW_TYPE_INTERFACE_Link) == 0 && m->callbacks.link) {
        uint32_t output_node = props ? (uint32_t)parse_positive(spa_dict_lookup(props, PW_KEY_LINK_OUTPUT_NODE)) : 0;
        uint32_t input_node = props ? (uint32_t)parse_positive(spa_dict_lookup(props, PW_KEY_LINK_INPUT_NODE)) : 0;
        struct object *o = calloc(1, sizeof(*o));
        if (!o) return;
        o->mixer = m;
        o->type = OBJECT_LINK;
        o->id = id;
        o->output_node = output_node;
        o->input_node = input_node;
        spa_list_append(&m->objects, &o->link);
        m->callbacks.link(m->user, id, output_node, input_node);
        return;
    } else {
        return;
    }
    struct pw_proxy *proxy = pw_registry_bind(m->registry, id, interface_type, interface_version, 0);
    if (!proxy) return;
    struct object *o = calloc(1, sizeof(*o));
    if (!o) {
        pw_proxy_destroy(proxy);
        return;
    }
    o->mixer = m;
    o->type = object_type;
    o->id = id;
    o->proxy = proxy;
    o->kind = (earshot_pw_node_kind)kind;
    o->name = copy(NULL);
    o->description = copy(NULL);
    o->application = copy(NULL);
    o->role = copy(NULL);
    spa_list_append(&m->objects, &o->link);
    pw_proxy_add_object_listener(proxy, &o->object_listener, events, o);
    if (object_type == OBJECT_NODE && kind == EARSHOT_PW_PLAYBACK) {
        uint32_t ids[] = { SPA_PARAM_Props };
        pw_node_subscribe_params((struct pw_node *)proxy, ids, 1);
    }
}

static void registry_global_remove(void *data, uint32_t id) {
    struct earshot_pw_mixer *m = data;
    struct object *o, *t;
    spa_list_for_each_safe(o, t, &m->objects, link) {
        if (o->id == id) destroy_object(o, 1);
    }
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = registry_global,
    .global_remove = registry_global_remove,
};

/* ---- the connection ---- */

static void core_done(void *data, uint32_t id, int seq) {
    struct earshot_pw_mixer *m = data;
    if (id != PW_ID_CORE) return;
    m->done_seq = seq;
    if (!m->connected && seq == m->pending_seq) {
        if (m->initial_sync == 0) {
            /* The globals are in and bound; a second round trip brings their info. */
            m->initial_sync = 1;
            m->pending_seq = pw_core_sync(m->core, PW_ID_CORE, 0);
        } else {
            m->connected = 1;
            m->reported_failure = 0;
            if (m->callbacks.state) m->callbacks.state(m->user, 1, "attached");
        }
    }
    pw_thread_loop_signal(m->loop, false);
}

static void core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    struct earshot_pw_mixer *m = data;
    (void)seq;
    if (id == PW_ID_CORE && res == -EPIPE) {
        m->lost = 1;
        schedule(m, 0);
        pw_thread_loop_signal(m->loop, false);
    }
    (void)message;
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = core_done,
    .error = core_error,
};

static void disconnect(struct earshot_pw_mixer *m, const char *why) {
    struct object *o, *t;
    spa_list_for_each_safe(o, t, &m->objects, link) destroy_object(o, 1);
    if (m->default_sink[0] && m->callbacks.default_node) m->callbacks.default_node(m->user, "sink", NULL);
    if (m->default_source[0] && m->callbacks.default_node) m->callbacks.default_node(m->user, "source", NULL);
    m->default_sink[0] = m->default_source[0] = '\0';
    if (m->registry) {
        spa_hook_remove(&m->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)m->registry);
        m->registry = NULL;
    }
    if (m->core) {
        spa_hook_remove(&m->core_listener);
        pw_core_disconnect(m->core);
        m->core = NULL;
    }
    int was_connected = m->connected;
    m->connected = 0;
    m->lost = 0;
    m->done_seq = 0;
    if ((was_connected || !m->reported_failure) && m->callbacks.state) m->callbacks.state(m->user, 0, why);
    m->reported_failure = 1;
    pw_thread_loop_signal(m->loop, false);
}

static void connect_now(struct earshot_pw_mixer *m) {
    struct pw_properties *props = pw_properties_new(PW_KEY_APP_NAME, m->client_name, NULL);
    if (m->remote) pw_properties_set(props, PW_KEY_REMOTE_NAME, m->remote);
    m->core = pw_context_connect(m->context, props, 0);
    if (!m->core) {
        char why[128];
        snprintf(why, sizeof(why), "cannot connect to the PipeWire daemon: %s", strerror(errno));
        m->connected = 0;
        if (!m->reported_failure && m->callbacks.state) m->callbacks.state(m->user, 0, why);
        m->reported_failure = 1;
        schedule(m, m->retry_ms);
        return;
    }
    pw_core_add_listener(m->core, &m->core_listener, &core_events, m);
    m->registry = pw_core_get_registry(m->core, PW_VERSION_REGISTRY, 0);
    pw_registry_add_listener(m->registry, &m->registry_listener, &registry_events, m);
    m->initial_sync = 0;
    m->pending_seq = pw_core_sync(m->core, PW_ID_CORE, 0);
}

static void on_timer(void *data, uint64_t expirations) {
    struct earshot_pw_mixer *m = data;
    (void)expirations;
    if (m->lost) {
        disconnect(m, "the PipeWire daemon went away");
        schedule(m, m->retry_ms);
        return;
    }
    if (!m->core) connect_now(m);
}

/* ---- the public functions ---- */

int earshot_pw_socket_path(const char *remote, char *path, size_t size) {
    const char *name = remote ? remote : getenv("PIPEWIRE_REMOTE");
    if (!name || !*name) name = "pipewire-0";
    int length;
    if (name[0] == '/') {
        length = snprintf(path, size, "%s", name);
    } else {
        const char *dir = getenv("PIPEWIRE_RUNTIME_DIR");
        if (!dir || !*dir) dir = getenv("XDG_RUNTIME_DIR");
        if (!dir || !*dir) return -ENOENT;
        length = snprintf(path, size, "%s/%s", dir, name);
    }
    return length < 0 || (size_t)length >= size ? -ENAMETOOLONG : 0;
}

int earshot_pw_probe(const char *remote) {
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    int found = earshot_pw_socket_path(remote, address.sun_path, sizeof(address.sun_path));
    if (found != 0) return found;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int result = connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0 ? 0 : -errno;
    close(fd);
    return result;
}

earshot_pw_mixer *earshot_pw_mixer_new(const char *remote, const char *client_name,
                                       const earshot_pw_callbacks *callbacks, void *user, int retry_ms,
                                       char *message, size_t message_size) {
    if (earshot_pw_library_open(message, message_size) != 0) return NULL;
    snprintf(message, message_size, "cannot start a PipeWire thread loop");
    pw_init(NULL, NULL);
    struct earshot_pw_mixer *m = calloc(1, sizeof(*m));
    if (!m) return NULL;
    spa_list_init(&m->objects);
    m->callbacks = *callbacks;
    m->user = user;
    m->remote = remote ? strdup(remote) : NULL;
    m->client_name = copy(client_name);
    m->retry_ms = retry_ms > 0 ? retry_ms : 500;
    m->loop = pw_thread_loop_new("earshot-mixer", NULL);
    if (!m->loop) goto fail;
    /* No configuration file: client.conf's modules make and export nodes and devices
       (client-node, client-device, adapter, session-manager), of no use to a mixer that
       watches nodes and sets their volumes, and about 0.8 MiB of a process. The context
       loads the two it needs: the protocol, and the metadata interface (the defaults). */
    m->context = pw_context_new(pw_thread_loop_get_loop(m->loop), pw_properties_new(PW_KEY_CONFIG_NAME, "null", NULL), 0);
    if (!m->context) goto fail;
    static const char *const modules[] = {"libpipewire-module-protocol-native", "libpipewire-module-metadata"};
    for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
        if (!pw_context_load_module(m->context, modules[i], NULL, NULL)) {
            snprintf(message, message_size, "cannot load %s: %s", modules[i], strerror(errno));
            goto fail;
        }
    }
    m->timer = pw_loop_add_timer(pw_thread_loop_get_loop(m->loop), on_timer, m);
    if (!m->timer) goto fail;
    pw_thread_loop_lock(m->loop);
    if (pw_thread_loop_start(m->loop) < 0) {
        pw_thread_loop_unlock(m->loop);
        goto fail;
    }
    schedule(m, 0);
    pw_thread_loop_unlock(m->loop);
    return m;
fail:
    if (m->context) pw_context_destroy(m->context);
    if (m->loop) pw_thread_loop_destroy(m->loop);
    free(m->remote);
    free(m->client_name);
    free(m);
    return NULL;
}

int earshot_pw_mixer_set(earshot_pw_mixer *m, uint32_t id, float volume, int mute) {
    int result = -ENOENT;
    pw_thread_loop_lock(m->loop);
    if (!m->core || m->lost) {
        pw_thread_loop_unlock(m->loop);
        return -ENOTCONN;
    }
    struct object *o;
    spa_list_for_each(o, &m->objects, link) {
        if (o->type != OBJECT_NODE || o->id != id || o->kind != EARSHOT_PW_PLAYBACK) continue;
        uint8_t buffer[256];
        struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
        struct spa_pod_frame frame;
        spa_pod_builder_push_object(&b, &frame, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
        if (volume >= 0) {
            spa_pod_builder_prop(&b, SPA_PROP_volume, 0);
            spa_pod_builder_float(&b, volume);
        }
        if (mute >= 0) {
            spa_pod_builder_prop(&b, SPA_PROP_mute, 0);
            spa_pod_builder_bool(&b, mute != 0);
        }
        struct spa_pod *pod = spa_pod_builder_pop(&b, &frame);
        result = pw_node_set_param((struct pw_node *)o->proxy, SPA_PARAM_Props, 0, pod);
        if (result > 0) result = 0;
        break;
    }
    pw_thread_loop_unlock(m->loop);
    return result;
}

int earshot_pw_mixer_set_soft(earshot_pw_mixer *m, uint32_t id, const float *volumes, uint32_t n, int mute) {
    if (n == 0 || n > EARSHOT_PW_MAX_CHANNELS) return -EINVAL;
    int result = -ENOENT;
    pw_thread_loop_lock(m->loop);
    if (!m->core || m->lost) {
        pw_thread_loop_unlock(m->loop);
        return -ENOTCONN;
    }
    struct object *o;
    spa_list_for_each(o, &m->objects, link) {
        if (o->type != OBJECT_NODE || o->id != id || o->kind != EARSHOT_PW_PLAYBACK) continue;
        uint8_t buffer[1024];
        struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
        struct spa_pod_frame frame;
        spa_pod_builder_push_object(&b, &frame, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
        spa_pod_builder_prop(&b, SPA_PROP_softVolumes, 0);
        spa_pod_builder_array(&b, sizeof(float), SPA_TYPE_Float, n, volumes);
        spa_pod_builder_prop(&b, SPA_PROP_softMute, 0);
        spa_pod_builder_bool(&b, mute != 0);
        struct spa_pod *pod = spa_pod_builder_pop(&b, &frame);
        result = pw_node_set_param((struct pw_node *)o->proxy, SPA_PARAM_Props, 0, pod);
        if (result > 0) result = 0;
        break;
    }
    pw_thread_loop_unlock(m->loop);
    return result;
}

int earshot_pw_mixer_sync(earshot_pw_mixer *m, int timeout_ms) {
    pw_thread_loop_lock(m->loop);
    if (!m->core || m->lost) {
        pw_thread_loop_unlock(m->loop);
        return -ENOTCONN;
    }
    int seq = pw_core_sync(m->core, PW_ID_CORE, 0);
    struct timespec deadline;
    pw_thread_loop_get_time(m->loop, &deadline, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
    int result = 0;
    /* Sequence numbers grow; a done at or past ours means ours was handled. */
    while (m->core && !m->lost && m->done_seq < seq) {
        if (pw_thread_loop_timed_wait_full(m->loop, &deadline) != 0) {
            result = -ETIMEDOUT;
            break;
        }
    }
    if (result == 0 && (!m->core || m->lost)) result = -ENOTCONN;
    pw_thread_loop_unlock(m->loop);
    return result;
}

void earshot_pw_mixer_free(earshot_pw_mixer *m) {
    if (!m) return;
    pw_thread_loop_stop(m->loop);
    /* The thread has ended: nothing runs concurrently, and no callback may fire. */
    m->callbacks = (earshot_pw_callbacks){0};
    struct object *o, *t;
    spa_list_for_each_safe(o, t, &m->objects, link) destroy_object(o, 0);
    if (m->registry) {
        spa_hook_remove(&m->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)m->registry);
    }
    if (m->core) {
        spa_hook_remove(&m->core_listener);
        pw_core_disconnect(m->core);
    }
    pw_loop_destroy_source(pw_thread_loop_get_loop(m->loop), m->timer);
    pw_context_destroy(m->context);
    pw_thread_loop_destroy(m->loop);
    free(m->remote);
    free(m->client_name);
    free(m);
}
