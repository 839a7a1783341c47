/*
 * earshot-speak: speech by libespeak-ng in a process of its own.
 *
 * A service (EarshotVoice's SpeechSynthesizer) starts it at its first speech and talks to
 * it over a socket that is this process's standard input and output. When the service goes
 * quiet it closes the socket and this process exits, and libespeak-ng goes with it, with
 * what it brings: libpcaudio, and PulseAudio's client libraries, which are marked never to
 * be unloaded and so would stay in the service for good.
 *
 * Requests and replies, in the machine's byte order (both ends are on one machine):
 *
 *   request  u8 op: 'P' (prepare) or 'S' (synthesize)
 *            u32 voice length, the voice's name (e.g. "en-us")
 *            'S' only: i32 words per minute, u32 flags (1: phoneme input),
 *                      u32 text length, the text (UTF-8)
 *   reply    i32 status: 0 done, 1 engine unavailable, 2 unknown voice, 3 synthesis failed
 *            done:   u32 sample rate; 'S' only: u32 sample count, the samples (s16, mono)
 *            failed: i32 code (espeak_ERROR for 3, else 0), u32 length, a message
 *
 * It exits with 0 at the end of its input, and with 1 at a request it cannot read or a
 * reply it cannot write.
 */
#include <espeak-ng/speak_lib.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { STATUS_DONE = 0, STATUS_UNAVAILABLE = 1, STATUS_UNKNOWN_VOICE = 2, STATUS_FAILED = 3 };
enum { FLAG_PHONEMES = 1 };
/* Longer voices or texts are no request of a service's (its texts are bounded far below). */
enum { MAX_VOICE = 256, MAX_TEXT = 1 << 20 };

/* Reads exactly `length` bytes; 1 when done, 0 at the end of input before the first byte,
   -1 otherwise. */
static int read_exactly(void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t got = read(STDIN_FILENO, (char *)buffer + done, length - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return (got == 0 && done == 0) ? 0 : -1;
        done += (size_t)got;
    }
    return 1;
}

static int write_exactly(const void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t put = write(STDOUT_FILENO, (const char *)buffer + done, length - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return -1;
        done += (size_t)put;
    }
    return 0;
}

/* The samples of one synthesis, grown by the synth callback. */
typedef struct {
    int16_t *samples;
    size_t count, capacity;
    int failed;
} sink;

static int collect(short *wav, int count, espeak_EVENT *events) {
    if (wav == NULL || count <= 0 || events == NULL) return 0;
    sink *into = events->user_data;
    if (into->count + (size_t)count > into->capacity) {
        size_t capacity = into->capacity ? into->capacity * 2 : 16384;
        while (capacity < into->count + (size_t)count) capacity *= 2;
        int16_t *grown = realloc(into->samples, capacity * sizeof(int16_t));
        if (grown == NULL) { into->failed = 1; return 1; }
        into->samples = grown;
        into->capacity = capacity;
    }
    memcpy(into->samples + into->count, wav, (size_t)count * sizeof(int16_t));
    into->count += (size_t)count;
    return 0;
}

static int reply_failure(int32_t status, int32_t code, const char *message) {
    uint32_t length = (uint32_t)strlen(message);
    if (write_exactly(&status, sizeof status) || write_exactly(&code, sizeof code)
        || write_exactly(&length, sizeof length) || write_exactly(message, length)) return -1;
    return 0;
}

static int sample_rate = 0;
static char current_voice[MAX_VOICE + 1];

/* Initializes the engine (once) and selects `voice`; 0, or the reply's failure sent. */
static int prepare(const char *voice, int *replied) {
    *replied = 0;
    if (sample_rate <= 0) {
        sample_rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, espeakINITIALIZE_DONT_EXIT);
        if (sample_rate <= 0) {
            char message[64];
            snprintf(message, sizeof message, "espeak_Initialize returned %d", sample_rate);
            *replied = 1;
            return reply_failure(STATUS_UNAVAILABLE, 0, message);
        }
        espeak_SetSynthCallback(collect);
    }
    if (strcmp(current_voice, voice) != 0 || current_voice[0] == 0) {
        if (espeak_SetVoiceByName(voice) != EE_OK) {
            current_voice[0] = 0;
            *replied = 1;
            return reply_failure(STATUS_UNKNOWN_VOICE, 0, voice);
        }
        snprintf(current_voice, sizeof current_voice, "%s", voice);
    }
    return 0;
}

int main(void) {
    for (;;) {
        uint8_t op;
        int got = read_exactly(&op, 1);
        if (got == 0) return 0;
        uint32_t voice_length;
        char voice[MAX_VOICE + 1];
        if (got < 0 || (op != 'P' && op != 'S') || read_exactly(&voice_length, sizeof voice_length) != 1
            || voice_length > MAX_VOICE || (voice_length && read_exactly(voice, voice_length) != 1)) return 1;
        voice[voice_length] = 0;

        int32_t words_per_minute = 0;
        uint32_t flags = 0, text_length = 0;
        char *text = NULL;
        if (op == 'S') {
            if (read_exactly(&words_per_minute, sizeof words_per_minute) != 1 || read_exactly(&flags, sizeof flags) != 1
                || read_exactly(&text_length, sizeof text_length) != 1 || text_length > MAX_TEXT) return 1;
            text = malloc((size_t)text_length + 1);
            if (text == NULL || (text_length && read_exactly(text, text_length) != 1)) return 1;
            text[text_length] = 0;
        }

        int replied;
        if (prepare(voice, &replied) != 0) return 1;
        if (replied) { free(text); continue; }
        int32_t done = STATUS_DONE;
        uint32_t rate = (uint32_t)sample_rate;
        if (op == 'P') {
            if (write_exactly(&done, sizeof done) || write_exactly(&rate, sizeof rate)) return 1;
            continue;
        }

        espeak_SetParameter(espeakRATE, words_per_minute, 0);
        sink samples = {0};
        unsigned int synth_flags = espeakCHARS_UTF8 | ((flags & FLAG_PHONEMES) ? espeakPHONEMES : 0);
        espeak_ERROR result = espeak_Synth(text, (size_t)text_length + 1, 0, POS_CHARACTER, 0, synth_flags, NULL, &samples);
        free(text);
        int failed;
        if (result != EE_OK) {
            failed = reply_failure(STATUS_FAILED, (int32_t)result, "espeak_Synth failed");
        } else if (samples.failed) {
            failed = reply_failure(STATUS_FAILED, 0, "out of memory for the samples");
        } else {
            uint32_t count = (uint32_t)samples.count;
            failed = write_exactly(&done, sizeof done) || write_exactly(&rate, sizeof rate)
                || write_exactly(&count, sizeof count) || write_exactly(samples.samples, samples.count * sizeof(int16_t));
        }
        free(samples.samples);
        if (failed) return 1;
    }
}
