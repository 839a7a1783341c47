import ContractCore
import Testing
@testable import EarshotVoice

@Suite("Alert audio rendering")
struct AlertAudioRendererTests {
    @Test(arguments: [
        (22050, "250", 5513),   // 5512.5 rounds up
        (22050, "", 11025),     // no number: 500 ms
        (22050, "soon", 11025),
        (22050, "-20", 11025),
        (22050, "0", 0),
        (16000, "1000", 16000),
        (44100, "33.3", 1469),  // 1468.53
        (48000, " 10 ", 480),
        (8000, "999999999", 480_000), // capped at 60 s
    ])
    func silenceHasExactLength(rate: Int, text: String, frames: Int) throws {
        let renderer = AlertAudioRenderer(sampleRate: rate)
        let samples = try renderer.render(SpeechChunk(kind: .silence, text: text))
        #expect(samples.count == frames)
        #expect(samples.allSatisfy { $0 == 0 })
    }

    @Test func speechIsResampledToTheOutputRate() throws {
        let native = AlertAudioRenderer(sampleRate: 22050)
        let doubled = AlertAudioRenderer(sampleRate: 44100)
        let chunk = SpeechChunk(kind: .text, text: "Low tyre pressure.")
        let a = try native.render(chunk)
        let b = try doubled.render(chunk)
        #expect(!a.isEmpty)
        // espeak-ng carries a little state between utterances: lengths agree to about 1 %.
        #expect(abs(b.count - 2 * a.count) <= a.count / 50, "\(a.count) → \(b.count)")
        #expect(AudioMeasures.rms(b) > 0.02)
    }

    @Test func phonemeChunksAreSpoken() throws {
        let renderer = AlertAudioRenderer()
        for chunk in [SpeechChunk(kind: .sapiPhonemes, text: "h eh 1 l ow"),
                      SpeechChunk(kind: .lhplusPhonemes, text: "h@'loU")] {
            let samples = try renderer.render(chunk)
            #expect(samples.count > 22050 / 4, "\(chunk.kind)")
            #expect(AudioMeasures.rms(samples) > 0.02, "\(chunk.kind)")
        }
        #expect(throws: AlertAudioError.phonemes(UnknownPhonemeError(phoneSet: "SAPI_PHONEMES", symbol: "zz"))) {
            try renderer.render(SpeechChunk(kind: .sapiPhonemes, text: "h zz"))
        }
    }

    @Test func jinglesAndToneAtTheOutputRate() throws {
        let renderer = AlertAudioRenderer(sampleRate: 16000)
        #expect(try renderer.render(SpeechChunk(kind: .preRecorded, text: "LISTEN_JINGLE"))
                == Jingle.listen.render(sampleRate: 16000))
        #expect(try renderer.render(.tone) == Tone.render(sampleRate: 16000))
        #expect(throws: AlertAudioError.unknownJingle("DING")) {
            try renderer.render(SpeechChunk(kind: .preRecorded, text: "DING"))
        }
    }

    @Test func partsPutTheToneFirst() {
        let chunks = [SpeechChunk(kind: .text, text: "a"), SpeechChunk(kind: .silence, text: "")]
        #expect(AlertAudioRenderer.parts(of: chunks, playTone: true) == [.tone, .chunk(chunks[0]), .chunk(chunks[1])])
        #expect(AlertAudioRenderer.parts(of: chunks, playTone: false) == [.chunk(chunks[0]), .chunk(chunks[1])])
        #expect(AlertAudioRenderer.parts(of: [], playTone: true).isEmpty)
    }

    @Test func missingFileIsSkippedOrFails() throws {
        let renderer = AlertAudioRenderer()
        let missing = SpeechChunk(kind: .file, text: "/nonexistent/earshot.wav")
        let chunks = [SpeechChunk(kind: .silence, text: "100"), missing, SpeechChunk(kind: .preRecorded, text: "POSITIVE_JINGLE")]
        let rendered = try renderer.renderAll(chunks, playTone: true, skippingUnreadableFiles: true)
        #expect(rendered.segments.count == 3)
        #expect(rendered.segments[1].count == 2205)
        #expect(rendered.skipped == [.notFound(path: "/nonexistent/earshot.wav")])
        #expect(throws: AlertAudioError.file(.notFound(path: "/nonexistent/earshot.wav"))) {
            try renderer.renderAll(chunks, playTone: false, skippingUnreadableFiles: false)
        }
    }

    @Test func fileChunkIsDecodedAtTheOutputRate() throws {
        let files = TestFiles()
        defer { files.remove() }
        let path = files.writeWAV("half.wav", samples: [Float](repeating: 0.25, count: 22050), channels: 1, sampleRate: 44100)
        let renderer = AlertAudioRenderer(sampleRate: 16000)
        let samples = try renderer.render(SpeechChunk(kind: .file, text: path))
        #expect(samples.count == 8000)
        #expect(abs(Int(samples[4000]) - 8192) <= 40)
    }
}
