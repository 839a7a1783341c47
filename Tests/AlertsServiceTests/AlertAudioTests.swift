import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// What reaches the speaker (an ALSA file plugin): tone, speech, silence, files.
@Suite struct AlertAudioTests {
    static let rate = Double(AlertsFixture.outputRate)

    /// Speaks `chunks` and returns what the speaker played (each alert opens the PCM
    /// anew, and the file plugin starts its file afresh).
    static func spoken(_ f: AlertsFixture, _ chunks: [SpeechChunk], tone: Bool = false) async throws -> [Int16] {
        let done = try await f.alerts.speak(chunks, options: SpeechOptions(playTone: tone))
        #expect(done.success, "\(chunks): \(done.resultCode) \(done.warnings)")
        return try f.speakerSamples()
    }

    /// The frequency of a steady tone, from the upward zero crossings of `samples`.
    static func frequency(_ samples: ArraySlice<Int16>) -> Double {
        var crossings = 0
        var previous = samples.first ?? 0
        for sample in samples.dropFirst() {
            if previous < 0 && sample >= 0 { crossings += 1 }
            previous = sample
        }
        return Double(crossings) / (Double(samples.count) / rate)
    }

    @Test func toneComesBeforeSpeechAndSpeechIsPlausible() async throws {
        try await AlertsFixture.with { f in
            let sentence: [SpeechChunk] = [.text("Turn left in two hundred metres")]
            let speech = try await Self.spoken(f, sentence)
            let seconds = Double(speech.count) / Self.rate
            #expect(seconds > 1.0 && seconds < 4.0, "six words took \(seconds) s")
            #expect(isAudible(speech[...]))

            // espeak-ng varies an utterance's length by about 1 % from call to call.
            let withTone = try await Self.spoken(f, sentence, tone: true)
            let addedSeconds = Double(withTone.count - speech.count) / Self.rate
            #expect(addedSeconds > 0.1 && addedSeconds < 0.5, "the tone added \(addedSeconds) s")
            // The output opens with a steady tone: the same pitch in both halves of its
            // first 0.2 s, within the range of a chime.
            let first = withTone[0..<Int(0.1 * Self.rate)]
            let second = withTone[Int(0.1 * Self.rate)..<Int(0.2 * Self.rate)]
            let (pitch, again) = (Self.frequency(first), Self.frequency(second))
            #expect(isAudible(first) && isAudible(second))
            #expect(pitch > 300 && pitch < 3000 && abs(pitch - again) / pitch < 0.03, "tone at \(pitch) and \(again) Hz")
            // Speech alone does not open that way.
            #expect(abs(Self.frequency(speech[0..<Int(0.1 * Self.rate)]) - pitch) / pitch > 0.03 || !isAudible(speech[0..<Int(0.1 * Self.rate)]))
        }
    }

    /// Speech is made by the helper `earshot-speak`, which the service starts at its first
    /// spoken chunk: a service that has spoken nothing has started none, and the service
    /// itself never maps libespeak-ng, nor what it brings (libpcaudio, and PulseAudio's
    /// client libraries, which could never be unloaded from it).
    @Test func speechIsMadeByAHelperStartedWhenFirstNeeded() async throws {
        try await AlertsFixture.with { f in
            func helpers() -> [(pid: Int32, zombie: Bool)] { f.service.children(named: "earshot-speak") }
            #expect(helpers().isEmpty, "a speech helper before any speech")
            let silence = try await Self.spoken(f, [.silence(ms: 100)])
            #expect(silence.count == Int(0.1 * Self.rate))
            #expect(helpers().isEmpty, "a speech helper for a SILENCE chunk")
            let speech = try await Self.spoken(f, [.text("hello")])
            #expect(isAudible(speech[...]))
            #expect(helpers().map(\.zombie) == [false], "\(helpers())")
            for library in ["libespeak-ng", "libpcaudio", "libpulse"] {
                #expect(try !f.service.maps(library), "\(library) mapped in the service")
            }
        }
    }

    /// Once the service has gone quiet after speaking, its speech helper is ended (and
    /// waited for: no zombie); the next spoken alert starts another and sounds the same.
    @Test func aQuietServiceEndsTheSpeechHelper() async throws {
        try await AlertsFixture.with { f in
            func helpers() -> [(pid: Int32, zombie: Bool)] { f.service.children(named: "earshot-speak") }
            let before = try await Self.spoken(f, [.text("hello there")])
            let first = helpers().map(\.pid)
            #expect(first.count == 1)
            // Quiet: no call for one trim interval (10 s) after one with calls.
            let deadline = ContinuousClock.now + .seconds(40)
            while !helpers().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(250)) }
            #expect(helpers().isEmpty, "the speech helper is still there 40 s after the last call: \(helpers())")
            let after = try await Self.spoken(f, [.text("hello there")])
            let second = helpers().map(\.pid)
            #expect(second.count == 1 && second != first, "\(first) then \(second)")
            #expect(isAudible(after[...]))
            // espeak-ng varies an utterance's length by about 1 % from call to call.
            #expect(abs(Double(after.count - before.count)) / Double(before.count) < 0.05, "\(before.count) then \(after.count) samples")
        }
    }

    @Test func silenceAddsItsLength() async throws {
        try await AlertsFixture.with { f in
            let word = try await Self.spoken(f, [.text("hello")])
            let pause = try await Self.spoken(f, [.text("hello"), .silence(ms: 700)])
            let addedMs = Double(pause.count - word.count) / Self.rate * 1000
            #expect(abs(addedMs - 700) <= 10, "SILENCE 700 added \(addedMs) ms")
            #expect(!isAudible(pause.suffix(Int(0.7 * Self.rate))))
            let fallback = try await Self.spoken(f, [.text("hello"), SpeechChunk(kind: .silence, text: "")])
            #expect(abs(Double(fallback.count - word.count) / Self.rate * 1000 - 500) <= 10)
        }
    }

    @Test func fileChunkAudioAppearsInTheOutput() async throws {
        try await AlertsFixture.with { f in
            // A 0.3 s WAV at the output rate (no resampling), a rising ramp of 440 Hz.
            let frames = Int(0.3 * Self.rate)
            let samples = (0..<frames).map { Int16(8000 * sin(2 * Double.pi * 440 * Double($0) / Self.rate)) }
            let wav = f.bus.directory.appendingPathComponent("chime.wav")
            try WAVFile.write(samples, rate: Int(Self.rate), to: wav)
            let played = try await Self.spoken(f, [.file(wav.path)])
            let window = Array(samples[1000..<1400])
            let found = played.indices.dropLast(window.count).contains { start in
                played[start] == window[0] && Array(played[start..<(start + window.count)]) == window
            }
            #expect(found, "the WAV's samples are in the speaker output")
            #expect(abs(played.count - frames) < Int(0.01 * Self.rate))
        }
    }

    static func monotonicUs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    /// `PlayedAudio`: the caller's pipe gets a streamed WAV of exactly the frames the speaker
    /// got, the tone's too, and sees EOF at the end; `StartedAtMonotonicUs` says when the
    /// first went out, after the call and before the completion.
    @Test func playedAudioIsWhatTheSpeakerGot() async throws {
        try await AlertsFixture.with { f in
            var ends: [Int32] = [-1, -1]
            try #require(pipe(&ends) == 0)
            let reader = UnixFD(taking: ends[0]), writer = UnixFD(taking: ends[1])
            // Read as it comes, on a thread of its own, as a canceller would.
            let stream = Task {
                try await withCheckedThrowingContinuation { (done: CheckedContinuation<[UInt8], any Error>) in
                    DispatchQueue.global().async { done.resume(with: Result { try readAll(reader) }) }
                }
            }
            let asked = Self.monotonicUs()
            let speech = try await f.alerts.startSpeaking([.text("Say your command after the tone")],
                                                          options: SpeechOptions(playTone: true, playedAudio: writer))
            writer.close()
            let result = try await speech.result
            let completed = Self.monotonicUs()
            #expect(result.success, "\(result.resultCode) \(result.warnings)")
            let started = try await speech.read(.startedAtMonotonicUs)
            #expect(started > asked && started < completed, "started at \(started), asked at \(asked), completed at \(completed)")

            let bytes = try await stream.value
            try #require(bytes.count > PCMWave.headerSize)
            #expect(Array(bytes[0 ..< PCMWave.headerSize]) == PCMWave.streamHeader(sampleRate: UInt32(Self.rate), channels: 1, bitsPerSample: 16))
            let played = stride(from: PCMWave.headerSize, to: bytes.count - 1, by: 2).map {
                Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
            }
            let speaker = try f.speakerSamples()
            #expect(played.count > Int(Self.rate), "\(played.count) frames handed over")
            // The speaker may end on a period's padding of silence; nothing else differs.
            #expect(speaker.count >= played.count && speaker.count - played.count < Int(0.1 * Self.rate), "\(speaker.count) played, \(played.count) handed over")
            #expect(Array(speaker.prefix(played.count)) == played, "the handed-over frames are the speaker's")
            #expect(speaker.dropFirst(played.count).allSatisfy { $0 == 0 })
        }
    }

    /// A caller that hands over a pipe and never reads it, or closes its end at once, changes
    /// nothing for the speech: it completes as without it, and the service stays.
    @Test func aPipeNobodyReadsHoldsNothingUp() async throws {
        try await AlertsFixture.with { f in
            for closesAtOnce in [false, true] {
                var ends: [Int32] = [-1, -1]
                try #require(pipe(&ends) == 0)
                let reader = UnixFD(taking: ends[0]), writer = UnixFD(taking: ends[1])
                if closesAtOnce { reader.close() }
                let started = ContinuousClock.now
                let result = try await f.alerts.speak([.silence(ms: 300), .text("Nobody reads this")], options: SpeechOptions(playedAudio: writer))
                #expect(result.success, "\(result.resultCode) \(result.warnings)")
                #expect(ContinuousClock.now - started < .seconds(10))
                writer.close()
                reader.close()
            }
            #expect(try await f.alerts.speak([.silence(ms: 100)]).success, "the service still speaks")
        }
    }
}

/// A minimal PCM WAV writer for test input.
enum WAVFile {
    static func write(_ samples: [Int16], rate: Int, to url: URL) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + samples.count * 2))
        data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(1))
        append(UInt32(rate)); append(UInt32(rate * 2)); append(UInt16(2)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(samples.count * 2))
        for sample in samples { append(sample) }
        try data.write(to: url)
    }
}
