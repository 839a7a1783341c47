// The C API of speech_processing.h over WebRTC's AudioProcessing (0.3, Debian's
// libwebrtc-audio-processing).
#include "speech_processing.h"

#include <webrtc/modules/audio_processing/include/audio_processing.h>

#include <cstdio>
#include <cstring>
#include <new>

struct earshot_speech_processor {
    webrtc::AudioProcessing *module;
    webrtc::StreamConfig stream;
    int voice;
};

extern "C" int earshot_speech_rate_supported(int rate) {
    switch (rate) {
    case 8000: case 16000: case 32000: case 44100: case 48000: return 1;
    default: return 0;
    }
}

extern "C" int earshot_speech_frame_size(int rate) { return rate / 100; }

static void explain(char *message, size_t size, const char *text, int code) {
    if (message && size > 0) snprintf(message, size, "%s (%d)", text, code);
}

extern "C" earshot_speech_processor *earshot_speech_processor_new(int rate, int echo_cancel, earshot_noise_suppression noise,
                                                                  char *message, size_t message_size) {
    if (!earshot_speech_rate_supported(rate)) {
        explain(message, message_size, "the rate is not one the module processes", rate);
        return nullptr;
    }
    webrtc::Config config;
    // The extended filter covers a longer echo path (a car's cabin and a delay the
    // caller's alignment leaves); delay-agnostic mode finds the remaining delay itself.
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
    webrtc::AudioProcessing *module = webrtc::AudioProcessing::Create(config);
    if (!module) {
        explain(message, message_size, "the audio processing module could not be created", 0);
        return nullptr;
    }
    using AP = webrtc::AudioProcessing;
    int status = module->Initialize(rate, rate, rate, AP::kMono, AP::kMono, AP::kMono);
    if (status == AP::kNoError) status = module->high_pass_filter()->Enable(echo_cancel || noise != EARSHOT_NOISE_OFF);
    if (status == AP::kNoError) status = module->echo_cancellation()->Enable(echo_cancel != 0);
    if (status == AP::kNoError && echo_cancel) {
        // Low suppression of what the adaptive filter leaves. A driver talking over the far
        // end keeps more of the voice than with moderate (the recogniser's word errors over
        // the echo: 22.4 % against 35.3 %, the voice 3.7-4.5 dB down against 4.9-6.0) and
        // the far end stays 30 dB down or more after the first second (moderate: 30.7),
        // now that a delay beyond the canceller's own reach is measured and handed over
        // (before, low left the prompt at a cabin's 120 ms 25 dB down). It takes longer to
        // get every window 25 dB down: 0.8-3.0 s against 0.5-0.9 s.
        status = module->echo_cancellation()->set_suppression_level(webrtc::EchoCancellation::kLowSuppression);
    }
    if (status == AP::kNoError) status = module->noise_suppression()->Enable(noise != EARSHOT_NOISE_OFF);
    if (status == AP::kNoError && noise != EARSHOT_NOISE_OFF) {
        status = module->noise_suppression()->set_level(noise == EARSHOT_NOISE_HIGH ? webrtc::NoiseSuppression::kVeryHigh
                                                                                       : webrtc::NoiseSuppression::kModerate);
    }
    if (status == AP::kNoError) status = module->voice_detection()->Enable(true);
    if (status != AP::kNoError) {
        explain(message, message_size, "the audio processing module refused its settings", status);
        delete module;
        return nullptr;
    }
    earshot_speech_processor *processor = new (std::nothrow) earshot_speech_processor{module, webrtc::StreamConfig(rate, 1, false), 0};
    if (!processor) {
        explain(message, message_size, "out of memory", 0);
        delete module;
    }
    return processor;
}

extern "C" void earshot_speech_processor_free(earshot_speech_processor *processor) {
    if (!processor) return;
    delete processor->module;
    delete processor;
}

extern "C" int earshot_speech_processor_far(earshot_speech_processor *processor, const float *frame) {
    // The module's reverse stream writes its output (unused here) to a destination.
    float copy[480];
    size_t count = processor->stream.num_frames();
    if (count > sizeof copy / sizeof copy[0]) return webrtc::AudioProcessing::kBadDataLengthError;
    memcpy(copy, frame, count * sizeof(float));
    const float *source = copy;
    float *destination = copy;
    return processor->module->ProcessReverseStream(&source, processor->stream, processor->stream, &destination);
}

extern "C" int earshot_speech_processor_near(earshot_speech_processor *processor, float *frame, int delay_ms) {
    processor->module->set_stream_delay_ms(delay_ms);
    const float *source = frame;
    float *destination = frame;
    int status = processor->module->ProcessStream(&source, processor->stream, processor->stream, &destination);
    processor->voice = processor->module->voice_detection()->stream_has_voice() ? 1 : 0;
    return status;
}

extern "C" int earshot_speech_processor_voice(const earshot_speech_processor *processor) { return processor->voice; }
