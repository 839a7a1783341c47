import EarshotMedia
import Foundation
import Testing

@Suite struct TranscoderTests {
    let directory = TestDirectory()

    /// What ffprobe should report for each format.
    static let expected: [MediaFormat: (codec: String, container: String)] = [
        .wave: ("pcm_s16le", "wav"),
        .flac: ("flac", "flac"),
        .oggVorbis: ("vorbis", "ogg"),
        .aacM4A: ("aac", "mov,mp4,m4a,3gp,3g2,mj2"),
    ]

    /// A stereo 44.1 kHz 16-bit WAV of 2.5 s.
    func waveSource() -> String {
        let samples = Signal.sine(frequency: 440, peak: 0.5, seconds: 2.5, sampleRate: 44100, channels: 2, spread: true)
        return directory.write("source.wav", WaveFile.bytes(samples, channels: 2, sampleRate: 44100))
    }

    /// `waveSource()`, and a FLAC of it made by ffmpeg.
    func sources() throws -> (wave: String, flac: String) {
        let wave = waveSource()
        let flac = directory.file("source.flac")
        try ExternalTools.ffmpeg(["-i", wave, flac])
        return (wave, flac)
    }

    func expectProbe(_ path: String, format: MediaFormat, sampleRate: Int, channels: Int, seconds: Double,
                     sourceLocation: SourceLocation = #_sourceLocation) throws {
        let probe = try ExternalTools.probe(path)
        let stream = try #require(probe.streams.first, sourceLocation: sourceLocation)
        let expected = try #require(Self.expected[format], sourceLocation: sourceLocation)
        #expect(stream.codec_name == expected.codec, sourceLocation: sourceLocation)
        #expect(probe.format.format_name == expected.container, sourceLocation: sourceLocation)
        #expect(stream.sample_rate == String(sampleRate), sourceLocation: sourceLocation)
        #expect(stream.channels == channels, sourceLocation: sourceLocation)
        #expect(abs(probe.duration - seconds) <= seconds * 0.01, "\(format): \(probe.duration) s", sourceLocation: sourceLocation)
    }

    @Test func everyFormatFromWaveAndFlac() throws {
        let (wave, flac) = try sources()
        for format in MediaFormat.allCases {
            for source in [wave, flac] {
                let output = directory.file("out." + format.testExtension)
                try Transcoder.transcode(from: source, to: output, format: format)
                try expectProbe(output, format: format, sampleRate: 44100, channels: 2, seconds: 2.5)
                // The output is a source the analyzer accepts (all but M4A), with every frame.
                if format != .aacM4A {
                    let analysis = try AudioAnalyzer.analyze(path: output)
                    #expect(analysis.format == format)
                    #expect(analysis.frames == 110_250)
                }
            }
        }
    }

    @Test func waveAndFlacKeepSixteenBitSamples() throws {
        let (wave, flac) = try sources()
        let original = try #require(WaveFile.dataChunk(directory.read(wave)))
        for source in [wave, flac] {
            let output = directory.file("copy.wav")
            try Transcoder.transcode(from: source, to: output, format: .wave)
            let copied = try #require(WaveFile.dataChunk(directory.read(output)))
            #expect(copied.elementsEqual(original), "\(source)")
        }
        // FLAC output decodes (with ffmpeg's decoder) to the same samples.
        let flacOutput = directory.file("copy.flac")
        try Transcoder.transcode(from: wave, to: flacOutput, format: .flac)
        let decoded = directory.file("decoded.wav")
        try ExternalTools.ffmpeg(["-i", flacOutput, "-c:a", "pcm_s16le", "-map_metadata", "-1", "-fflags", "+bitexact", decoded])
        let decodedSamples = try #require(WaveFile.dataChunk(directory.read(decoded)))
        #expect(decodedSamples.elementsEqual(original))
    }

    @Test func deeperSourcesRoundAndClipToSixteenBits() throws {
        let samples: [Float] = [0, 0.5, -0.5, 1.5, -1.5, 0.25 / 32768, 0.75 / 32768]
        let source = directory.write("float.wav", WaveFile.bytes(samples + [Float](repeating: 0, count: 993), channels: 1,
                                                                 sampleRate: 8000, encoding: .float32))
        let output = directory.file("pcm16.wav")
        try Transcoder.transcode(from: source, to: output, format: .wave)
        let data = try #require(WaveFile.dataChunk(directory.read(output)))
        let values = stride(from: data.startIndex, to: data.startIndex + 14, by: 2).map {
            Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)
        }
        #expect(values == [0, 16384, -16384, 32767, -32768, 0, 1])
    }

    @Test func aacKeepsRatesItCanEncodeAndResamplesOthers() throws {
        for (rate, written) in [(8000, 8000), (37800, 48000), (192_000, 48000)] {
            let samples = Signal.sine(frequency: 1000, peak: 0.5, seconds: 1.5, sampleRate: rate)
            let source = directory.write("mono-\(rate).wav", WaveFile.bytes(samples, channels: 1, sampleRate: rate))
            let output = directory.file("mono-\(rate).m4a")
            try Transcoder.transcode(from: source, to: output, format: .aacM4A)
            try expectProbe(output, format: .aacM4A, sampleRate: written, channels: 1, seconds: 1.5)
        }
    }

    /// libvorbis encodes at most 200 kHz; AAC resamples, FLAC keeps the rate, Vorbis refuses.
    @Test func vorbisRefusesRatesAbove200kHz() throws {
        let samples = Signal.sine(frequency: 1000, peak: 0.5, seconds: 0.25, sampleRate: 384_000)
        let source = directory.write("fast.wav", WaveFile.bytes(samples, channels: 1, sampleRate: 384_000))
        let output = directory.file("fast.ogg")
        let error = mediaError { () throws(MediaError) in try Transcoder.transcode(from: source, to: output, format: .oggVorbis) }
        #expect(error?.kind == .invalidAudio, "\(String(describing: error))")
        #expect(!directory.exists(output))
        let flac = directory.file("fast.flac")
        try Transcoder.transcode(from: source, to: flac, format: .flac)
        let analysis = try AudioAnalyzer.analyze(path: flac)
        #expect(analysis.sampleRate == 384_000)
    }

    @Test func sixChannels() throws {
        let samples = Signal.sine(frequency: 220, peak: 0.3, seconds: 1, sampleRate: 48000, channels: 6, spread: true)
        let source = directory.write("six-source.wav", WaveFile.bytes(samples, channels: 6, sampleRate: 48000))
        for format in MediaFormat.allCases {
            let output = directory.file("six." + format.testExtension)
            try Transcoder.transcode(from: source, to: output, format: format)
            if format == .aacM4A {
                try expectProbe(output, format: format, sampleRate: 48000, channels: 6, seconds: 1)
            } else {
                let analysis = try AudioAnalyzer.analyze(path: output)
                #expect(analysis.format == format && analysis.channels == 6 && analysis.frames == 48000)
            }
        }
    }

    @Test func refusesInvalidSourcesAndLeavesNoOutput() throws {
        let text = directory.write("notes.txt", Array("no audio here\n".utf8))
        for format in MediaFormat.allCases {
            let output = directory.file("out." + format.testExtension)
            let error = mediaError { () throws(MediaError) in try Transcoder.transcode(from: text, to: output, format: format) }
            #expect(error?.kind == .invalidAudio, "\(format): \(String(describing: error))")
            #expect(!directory.exists(output))
        }
    }

    @Test func refusesToOverwriteItsInput() throws {
        let wave = waveSource()
        let before = directory.read(wave)
        let error = mediaError { () throws(MediaError) in try Transcoder.transcode(from: wave, to: wave, format: .wave) }
        #expect(error?.kind == .io)
        #expect(directory.read(wave) == before)
    }

    @Test func unwritableOutputIsAnIOError() throws {
        let wave = waveSource()
        for format in MediaFormat.allCases {
            let output = directory.file("no-such-directory/out." + format.testExtension)
            let error = mediaError { () throws(MediaError) in try Transcoder.transcode(from: wave, to: output, format: format) }
            #expect(error?.kind == .io, "\(format): \(String(describing: error))")
        }
    }
}

extension MediaFormat {
    /// A file name extension for the tests' outputs.
    var testExtension: String {
        switch self {
        case .wave: "wav"
        case .oggVorbis: "ogg"
        case .flac: "flac"
        case .aacM4A: "m4a"
        }
    }
}
