import EarshotMedia
import Foundation
import Testing

@Suite struct AudioAnalyzerTests {
    let directory = TestDirectory()

    @Test func monoWave() throws {
        let samples = Signal.sine(frequency: 440, peak: 0.5, seconds: 2.5, sampleRate: 44100)
        let path = directory.write("mono.wav", WaveFile.bytes(samples, channels: 1, sampleRate: 44100))
        let analysis = try AudioAnalyzer.analyze(path: path)
        #expect(analysis.format == .wave)
        #expect(analysis.sampleRate == 44100)
        #expect(analysis.channels == 1)
        #expect(analysis.frames == 110_250)
        #expect(analysis.durationMicroseconds == 2_500_000)
    }

    @Test func deeperWaves() throws {
        let samples = Signal.sine(frequency: 440, peak: 0.5, seconds: 1, sampleRate: 96000, channels: 2)
        for encoding in [WaveFile.Encoding.pcm24, .float32] {
            let path = directory.write("deep.wav", WaveFile.bytes(samples, channels: 2, sampleRate: 96000, encoding: encoding))
            let analysis = try AudioAnalyzer.analyze(path: path)
            #expect(analysis.format == .wave)
            #expect(analysis.sampleRate == 96000)
            #expect(analysis.channels == 2)
            #expect(analysis.frames == 96000)
        }
    }

    @Test func sixChannelExtensibleWave() throws {
        // ffmpeg writes WAVE_FORMAT_EXTENSIBLE for more than two channels.
        let path = directory.file("surround.wav")
        try ExternalTools.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=500:duration=1:sample_rate=48000",
                                  "-ac", "6", "-c:a", "pcm_s16le", path])
        let analysis = try AudioAnalyzer.analyze(path: path)
        #expect(analysis.format == .wave)
        #expect(analysis.channels == 6)
        #expect(analysis.frames == 48000)
    }

    @Test func stereoFlacAndVorbis() throws {
        let samples = Signal.sine(frequency: 330, peak: 0.4, seconds: 2, sampleRate: 48000, channels: 2, spread: true)
        let wave = directory.write("stereo.wav", WaveFile.bytes(samples, channels: 2, sampleRate: 48000))
        let flac = directory.file("stereo.flac")
        let ogg = directory.file("stereo.ogg")
        try ExternalTools.ffmpeg(["-i", wave, "-c:a", "flac", flac, "-c:a", "libvorbis", ogg])

        let flacAnalysis = try AudioAnalyzer.analyze(path: flac)
        #expect(flacAnalysis.format == .flac)
        #expect(flacAnalysis.sampleRate == 48000)
        #expect(flacAnalysis.channels == 2)
        #expect(flacAnalysis.frames == 96000)

        let vorbisAnalysis = try AudioAnalyzer.analyze(path: ogg)
        #expect(vorbisAnalysis.format == .oggVorbis)
        #expect(vorbisAnalysis.sampleRate == 48000)
        #expect(vorbisAnalysis.channels == 2)
        #expect(vorbisAnalysis.frames == 96000)

        // Lossless and lossy copies of one signal measure (about) the same.
        let waveAnalysis = try AudioAnalyzer.analyze(path: wave)
        #expect(abs(flacAnalysis.loudnessLufs - waveAnalysis.loudnessLufs) < 0.01)
        #expect(abs(vorbisAnalysis.loudnessLufs - waveAnalysis.loudnessLufs) < 0.2)
    }

    /// BS.1770 is calibrated so that a 997 Hz sine peaking at 0 dBFS in one front channel
    /// reads -3.01 LKFS; at -20 dBFS peak it reads -23.01. Its true peak is its peak, -20 dBTP.
    @Test func loudnessOfAKnownSine() throws {
        let peak = pow(10, -20.0 / 20)
        let mono = Signal.sine(frequency: 997, peak: peak, seconds: 5, sampleRate: 48000)
        let monoPath = directory.write("sine.wav", WaveFile.bytes(mono, channels: 1, sampleRate: 48000, encoding: .float32))
        let analysis = try AudioAnalyzer.analyze(path: monoPath)
        #expect(abs(analysis.loudnessLufs - -23.01) < 0.5, "\(analysis.loudnessLufs) LUFS")
        #expect(abs(analysis.truePeakDbtp - -20) < 0.5, "\(analysis.truePeakDbtp) dBTP")

        // FFmpeg's own EBU R128 meter agrees.
        let meter = try ExternalTools.run("ffmpeg", ["-nostdin", "-hide_banner", "-nostats", "-i", monoPath,
                                                     "-af", "ebur128=peak=true", "-f", "null", "-"])
        let summary = meter.standardError.components(separatedBy: "Summary:").last ?? ""
        let integrated = summary.split(separator: "\n")
            .first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("I:") }
            .flatMap { Double($0.split(separator: " ").dropFirst().first ?? "") }
        let ffmpegLoudness = try #require(integrated, "no integrated loudness in: \(meter.standardError)")
        #expect(abs(analysis.loudnessLufs - ffmpegLoudness) < 0.2)

        // The same sine in both channels of a stereo file sums to 3 dB louder.
        let stereo = Signal.sine(frequency: 997, peak: peak, seconds: 5, sampleRate: 48000, channels: 2)
        let stereoPath = directory.write("sine2.wav", WaveFile.bytes(stereo, channels: 2, sampleRate: 48000, encoding: .float32))
        let stereoAnalysis = try AudioAnalyzer.analyze(path: stereoPath)
        #expect(abs(stereoAnalysis.loudnessLufs - -20.0) < 0.5, "\(stereoAnalysis.loudnessLufs) LUFS")
    }

    @Test func silence() throws {
        let path = directory.write("silence.wav", WaveFile.bytes([Float](repeating: 0, count: 2 * 44100 * 2),
                                                                 channels: 2, sampleRate: 44100))
        let analysis = try AudioAnalyzer.analyze(path: path)
        #expect(analysis.frames == 88200)
        #expect(analysis.loudnessLufs == -.infinity)
        #expect(analysis.truePeakDbtp == -.infinity)
    }

    @Test func refusesWhatIsNotAcceptedAudio() throws {
        let valid = WaveFile.bytes(Signal.sine(frequency: 440, peak: 0.5, seconds: 0.5, sampleRate: 44100),
                                   channels: 1, sampleRate: 44100)
        let text = directory.write("notes.txt", Array("These are not the samples you are looking for.\n".utf8))
        let empty = directory.write("empty.wav", [])
        let truncated = directory.write("truncated.wav", Array(valid.prefix(30)))
        let headerOnly = directory.write("header-only.wav", Array(valid.prefix(44)))
        let nineChannels = directory.write("nine.wav", WaveFile.bytes([Float](repeating: 0.1, count: 9 * 1000),
                                                                      channels: 9, sampleRate: 44100))
        let slow = directory.write("slow.wav", WaveFile.bytes([Float](repeating: 0.1, count: 4000),
                                                              channels: 1, sampleRate: 4000))
        let aiff = directory.file("tone.aiff")
        let alaw = directory.file("alaw.wav")
        try ExternalTools.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.5", aiff, "-c:a", "pcm_alaw", alaw])

        for path in [text, empty, truncated, headerOnly, nineChannels, slow, aiff, alaw] {
            let error = mediaError { () throws(MediaError) in try AudioAnalyzer.analyze(path: path) }
            #expect(error?.kind == .invalidAudio, "\(path): \(String(describing: error))")
        }
        let aiffError = mediaError { () throws(MediaError) in try AudioAnalyzer.analyze(path: aiff) }
        #expect(aiffError?.message.contains("AIFF") == true, "\(String(describing: aiffError))")

        let missing = mediaError { () throws(MediaError) in try AudioAnalyzer.analyze(path: directory.file("missing.wav")) }
        #expect(missing?.kind == .io)
    }

    @Test func refusesFlacThatStopsPartWay() throws {
        let samples = Signal.sine(frequency: 440, peak: 0.5, seconds: 3, sampleRate: 44100, channels: 2, spread: true)
        let wave = directory.write("long.wav", WaveFile.bytes(samples, channels: 2, sampleRate: 44100))
        let flac = directory.file("long.flac")
        try ExternalTools.ffmpeg(["-i", wave, flac])
        let bytes = directory.read(flac)
        let cut = directory.write("cut.flac", Array(bytes.prefix(bytes.count / 2)))
        let error = mediaError { () throws(MediaError) in try AudioAnalyzer.analyze(path: cut) }
        #expect(error?.kind == .invalidAudio, "\(String(describing: error))")
    }
}
