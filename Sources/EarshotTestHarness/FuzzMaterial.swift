import ContractCore
import EarshotContract
import EarshotDBus
import Foundation
import Glibc

/// Files and words the bus fuzzer puts into its values: a real WAV file, garbage, an empty
/// file, a directory, and paths that name nothing, endless devices or a full device. Every
/// path a fuzzed value can carry is one of these: the services run as the test's user,
/// and a random absolute path could name a file worth keeping.
public struct FuzzMaterial: Sendable {
    public let directory: URL
    /// A 1 s, 16 kHz mono 16-bit WAV file.
    public let wave: String
    public let paths: [String]
    /// Where an export may write (inside `directory`).
    public let exportPaths: [String]
    /// Names and values from the contract, for keys and strings.
    public let words: [String]

    /// Writes the files into `directory` (created if needed).
    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let wave = directory.appendingPathComponent("tone.wav")
        let samples = (0..<16000).map { Int16(8000 * sin(Double($0) * 2 * .pi * 440 / 16000)) }
        var data = PCMWave.header(sampleRate: 16000, channels: 1, bitsPerSample: 16, dataBytes: UInt64(samples.count * 2))
        samples.withUnsafeBytes { data.append(contentsOf: $0) }
        try Data(data).write(to: wave)
        var generator = SeededGenerator(seed: 7)
        let garbage = directory.appendingPathComponent("garbage.bin")
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: garbage)
        let empty = directory.appendingPathComponent("empty")
        try Data().write(to: empty)
        let folder = directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.wave = wave.path
        paths = [wave.path, garbage.path, empty.path, folder.path, "/dev/null", "/dev/zero", "/dev/urandom",
                 "/nonexistent/earshot/file.wav", directory.path + "/../" + directory.lastPathComponent + "/tone.wav",
                 directory.path + "/" + String(repeating: "long", count: 1100)]
        exportPaths = [directory.appendingPathComponent("export.out").path, folder.path, "/dev/null", "/dev/full",
                       "/nonexistent/earshot/export.out", directory.appendingPathComponent("folder/new.out").path]
        words = Self.words
    }

    static let words = contractNames + values

    /// The contract's names, for keys: every key of every method's inputs and outputs, of
    /// every signal's arguments and of every property's value (and of their dictionaries, at
    /// any depth), and every property's name, of every interface of every service; each once,
    /// sorted so that a seed picks the same word on every run.
    static let contractNames: [String] = {
        func names(_ keys: [OptionKey]) -> [String] { keys.flatMap { [$0.name] + names($0.keys) } }
        var all = Set<String>()
        for interface in EarshotContract.services.flatMap(\.interfaces) {
            for method in interface.methods { all.formUnion((method.inputs + method.outputs).flatMap { names($0.keys) }) }
            for signal in interface.signals { all.formUnion(signal.arguments.flatMap { names($0.keys) }) }
            for property in interface.properties {
                all.insert(property.name)
                all.formUnion(names(property.keys))
            }
        }
        return all.sorted()
    }()

    /// Values, for strings: words the contract's rules take, ALSA device names and a date.
    static let values = [
        "PCM", "8KHZ", "16KHZ", "22KHZ", "44KHZ", "8_BIT", "16_BIT", "TEXT", "SAPI_PHONEMES", "LHPLUS_PHONEMES",
        "PRE_RECORDED", "HELP_JINGLE", "SILENCE", "FILE", "BOTH", "IMAGE", "NORMAL", "EMERGENCY", "NAVIGATION",
        "wave", "oggVorbis", "flac", "aacM4A", "tonal", "atonal", "unknown", "created", "title", "tempo", "length",
        "playback", "record", "playAndRecord", "ambient", "soloAmbient", "multiRoute", "mixWithOthers",
        "duckOthers", "defaultToSpeaker", "allowBluetooth", "voiceChat", "measurement", "builtInMic", "mic",
        "null", "default", "front", "omnidirectional", "portrait", "2026-01-01T00:00:00Z",
    ]
}
