/*
 * An ALSA capture PCM that can be unplugged, as an external (ioplug) plugin.
 *
 * It serves the bytes of a file as captured audio (from the start, looping at its end)
 * for as long as a "presence" file exists. Once that file is removed the device behaves
 * like hardware that was pulled out: the PCM goes to SND_PCM_STATE_DISCONNECTED and reads,
 * starts and prepares fail with -ENODEV; new opens fail with -ENODEV too.
 *
 * Configuration (the library is named by its absolute path):
 *
 *     pcm_type.earshot_unpluggable { lib "/path/to/libEarshotUnpluggablePCM.so" }
 *     pcm.gone {
 *         type earshot_unpluggable
 *         infile "/path/to/audio.raw"       # raw interleaved PCM in the format asked for
 *         presence "/path/to/present"       # remove it to unplug the device
 *         exclusive true                    # optional: one open at a time, others get -EBUSY
 *         rate 16000                        # optional: the only rate it accepts
 *     }
 *
 * The device is not real time: a period is ready whenever it is asked for. It accepts
 * U8 and S16_LE, 1 or 2 channels, 8000..48000 Hz, interleaved read access only.
 */
/* A shared object, whatever the build says: alsa-lib's headers then export the plugin's
   version symbol instead of registering it in a static table. */
#ifndef PIC
#define PIC 1
#endif
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include "unpluggable_pcm.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <unistd.h>

typedef struct {
    snd_pcm_ioplug_t io;
    char *presence;
    int input;
    /* Always readable: the device always has a period to give. */
    int ready;
    /* With `exclusive`: the presence file, locked (flock) for as long as the PCM is open. */
    int lock;
    /* Frames handed to the application since the last prepare. */
    snd_pcm_uframes_t transferred;
} unpluggable_t;

static int is_present(const unpluggable_t *device) {
    return access(device->presence, F_OK) == 0;
}

/* Marks the PCM disconnected, as the kernel does for a vanished device. */
static int unplugged(unpluggable_t *device) {
    snd_pcm_ioplug_set_state(&device->io, SND_PCM_STATE_DISCONNECTED);
    return -ENODEV;
}

static int unpluggable_start(snd_pcm_ioplug_t *io) {
    unpluggable_t *device = io->private_data;
    return is_present(device) ? 0 : unplugged(device);
}

static int unpluggable_stop(snd_pcm_ioplug_t *io) {
    (void)io;
    return 0;
}

static int unpluggable_prepare(snd_pcm_ioplug_t *io) {
    unpluggable_t *device = io->private_data;
    device->transferred = 0;
    return is_present(device) ? 0 : unplugged(device);
}

/* One period ahead of what was read: a period is always available. */
static snd_pcm_sframes_t unpluggable_pointer(snd_pcm_ioplug_t *io) {
    unpluggable_t *device = io->private_data;
    return (snd_pcm_sframes_t)((device->transferred + io->period_size) % io->buffer_size);
}

/* Fills `length` bytes at `destination` from the input file, starting over at its end
   (an empty file gives silence). */
static int read_input(unpluggable_t *device, char *destination, size_t length) {
    size_t done = 0;
    int rewound = 0;
    while (done < length) {
        ssize_t count = read(device->input, destination + done, length - done);
        if (count < 0) {
            if (errno == EINTR) continue;
            return -EIO;
        }
        if (count == 0) {
            if (rewound) {
                size_t sample_bytes = (size_t)snd_pcm_format_physical_width(device->io.format) / 8;
                snd_pcm_format_set_silence(device->io.format, destination + done,
                                           (unsigned int)((length - done) / sample_bytes));
                return 0;
            }
            if (lseek(device->input, 0, SEEK_SET) < 0) return -EIO;
            rewound = 1;
            continue;
        }
        rewound = 0;
        done += (size_t)count;
    }
    return 0;
}

static snd_pcm_sframes_t unpluggable_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                              snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
    unpluggable_t *device = io->private_data;
    if (!is_present(device)) return unplugged(device);
    size_t frame_bytes = (size_t)snd_pcm_format_physical_width(io->format) / 8 * io->channels;
    char *destination = (char *)areas[0].addr + (areas[0].first + areas[0].step * offset) / 8;
    int result = read_input(device, destination, size * frame_bytes);
    if (result < 0) return result;
    device->transferred += size;
    return (snd_pcm_sframes_t)size;
}

static void release(unpluggable_t *device) {
    if (device->input >= 0) close(device->input);
    if (device->ready >= 0) close(device->ready);
    if (device->lock >= 0) close(device->lock);
    free(device->presence);
    free(device);
}

static int unpluggable_close(snd_pcm_ioplug_t *io) {
    release(io->private_data);
    return 0;
}

static const snd_pcm_ioplug_callback_t unpluggable_callbacks = {
    .start = unpluggable_start,
    .stop = unpluggable_stop,
    .pointer = unpluggable_pointer,
    .transfer = unpluggable_transfer,
    .close = unpluggable_close,
    .prepare = unpluggable_prepare,
};

static int set_constraints(snd_pcm_ioplug_t *io, long rate) {
    static const unsigned int accesses[] = {SND_PCM_ACCESS_RW_INTERLEAVED};
    static const unsigned int formats[] = {SND_PCM_FORMAT_U8, SND_PCM_FORMAT_S16_LE};
    int result = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_ACCESS, 1, accesses);
    if (result >= 0) result = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_FORMAT, 2, formats);
    if (result >= 0) result = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 2);
    if (result >= 0) {
        result = rate > 0 ? snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_RATE, (unsigned int)rate, (unsigned int)rate)
                          : snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_RATE, 8000, 48000);
    }
    if (result >= 0) result = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 1 << 20);
    if (result >= 0) result = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64);
    return result;
}

SND_PCM_PLUGIN_DEFINE_FUNC(earshot_unpluggable) {
    (void)root;
    const char *infile = NULL, *presence = NULL;
    int exclusive = 0;
    long rate = 0;
    snd_config_iterator_t position, next;
    snd_config_for_each(position, next, conf) {
        snd_config_t *entry = snd_config_iterator_entry(position);
        const char *id;
        if (snd_config_get_id(entry, &id) < 0) continue;
        if (strcmp(id, "comment") == 0 || strcmp(id, "type") == 0 || strcmp(id, "hint") == 0) continue;
        if (strcmp(id, "rate") == 0) {
            if (snd_config_get_integer(entry, &rate) < 0 || rate < 8000 || rate > 48000) {
                SNDERR("rate must be an integer in 8000..48000");
                return -EINVAL;
            }
            continue;
        }
        if (strcmp(id, "exclusive") == 0) {
            exclusive = snd_config_get_bool(entry);
            if (exclusive < 0) {
                SNDERR("exclusive must be a boolean");
                return -EINVAL;
            }
            continue;
        }
        if (strcmp(id, "infile") == 0 || strcmp(id, "presence") == 0) {
            const char *value;
            if (snd_config_get_string(entry, &value) < 0) {
                SNDERR("%s must be a string", id);
                return -EINVAL;
            }
            if (strcmp(id, "infile") == 0) infile = value; else presence = value;
            continue;
        }
        SNDERR("unknown field %s", id);
        return -EINVAL;
    }
    if (infile == NULL || presence == NULL) {
        SNDERR("infile and presence are required");
        return -EINVAL;
    }
    if (stream != SND_PCM_STREAM_CAPTURE) {
        SNDERR("%s is a capture device", name);
        return -EINVAL;
    }
    if (access(presence, F_OK) != 0) return -ENODEV;

    unpluggable_t *device = calloc(1, sizeof(*device));
    if (device == NULL) return -ENOMEM;
    device->input = -1;
    device->ready = -1;
    device->lock = -1;
    device->presence = strdup(presence);
    if (device->presence == NULL) {
        release(device);
        return -ENOMEM;
    }
    if (exclusive) {
        /* As a hardware device open elsewhere: busy until that user closes it. */
        device->lock = open(presence, O_RDONLY | O_CLOEXEC);
        if (device->lock < 0 || flock(device->lock, LOCK_EX | LOCK_NB) < 0) {
            int error = (errno == EWOULDBLOCK) ? -EBUSY : -errno;
            release(device);
            return error;
        }
    }
    device->input = open(infile, O_RDONLY | O_CLOEXEC);
    if (device->input < 0) {
        int error = -errno;
        SNDERR("cannot open %s: %s", infile, strerror(-error));
        release(device);
        return error;
    }
    device->ready = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    if (device->ready < 0) {
        int error = -errno;
        release(device);
        return error;
    }

    device->io.version = SND_PCM_IOPLUG_VERSION;
    device->io.name = "Earshot unpluggable test microphone";
    device->io.poll_fd = device->ready;
    device->io.poll_events = POLLIN;
    device->io.mmap_rw = 0;
    device->io.callback = &unpluggable_callbacks;
    device->io.private_data = device;

    int result = snd_pcm_ioplug_create(&device->io, name, stream, mode);
    if (result < 0) {
        release(device);
        return result;
    }
    result = set_constraints(&device->io, rate);
    if (result < 0) {
        snd_pcm_ioplug_delete(&device->io); /* calls unpluggable_close */
        return result;
    }
    *pcmp = device->io.pcm;
    return 0;
}

SND_PCM_PLUGIN_SYMBOL(earshot_unpluggable);
