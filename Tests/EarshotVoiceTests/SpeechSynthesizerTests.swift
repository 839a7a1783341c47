import ContractCore
import Foundation
import Glibc
import Testing
@testable import EarshotVoice

@Suite("espeak-ng speech in its helper process", .serialized)
struct SpeechSynthesizerTests {
    @Test func fiveWordSentenceHasAPlausibleLength() throws {
        let synthesizer = try SpeechSynthesizer()
        #expect(synthesizer.sampleRate == 22050)
        let samples = try synthesizer.synthesize(text: "Please fasten your seat belt.", phonemes: false)
        let seconds = Double(samples.count) / Double(synthesizer.sampleRate)
        #expect(seconds > 0.8 && seconds < 4, "\(seconds) s")
        #expect(AudioMeasures.rms(samples) > 0.02, "rms \(AudioMeasures.rms(samples))")
        #expect(AudioMeasures.peak(samples) > 0.2)
    }

    @Test func phonemeInputIsSpoken() throws {
        let synthesizer = try SpeechSynthesizer()
        let samples = try synthesizer.synthesize(text: "h@l'oU w'3:ld", phonemes: true)
        let seconds = Double(samples.count) / Double(synthesizer.sampleRate)
        #expect(seconds > 0.4 && seconds < 2.5, "\(seconds) s")
        #expect(AudioMeasures.rms(samples) > 0.02)
    }

    @Test func phonemeInputCannotCloseItsBlock() throws {
        let synthesizer = try SpeechSynthesizer()
        #expect(throws: SpeechError.self) { try synthesizer.synthesize(text: "h@]] hello", phonemes: true) }
    }

    @Test func plainTextIsNotPhonemeInput() throws {
        let synthesizer = try SpeechSynthesizer()
        // Read as text, "[[" is punctuation; as phonemes "h@l'oU" would be one word.
        let asText = try synthesizer.synthesize(text: "[[h@l'oU]]", phonemes: false)
        let asPhonemes = try synthesizer.synthesize(text: "h@l'oU", phonemes: true)
        #expect(asText != asPhonemes)
    }

    @Test func emptyTextGivesNoSamples() throws {
        #expect(try SpeechSynthesizer().synthesize(text: "  ", phonemes: false).isEmpty)
    }

    @Test func unknownVoiceIsAnError() {
        #expect(throws: SpeechError.unknownVoice("xx-nosuch")) { try SpeechSynthesizer(voice: "xx-nosuch") }
    }

    /// The text of a file of /proc (whose size reads as 0: read to the end).
    static func proc(_ path: String) throws -> String {
        String(decoding: try FileHandle(forReadingFrom: URL(filePath: "/proc/" + path)).readToEnd() ?? Data(), as: UTF8.self)
    }

    /// Whether this process has a file mapped whose path contains `name`.
    static func mapped(_ name: String) throws -> Bool {
        let maps = try proc("self/maps")
        #expect(maps.contains("/libc.so"), "the maps were not read")
        return maps.contains(name)
    }

    /// Speech comes from the helper: this process maps none of libespeak-ng or of what it
    /// brings, and a released helper is gone (reaped, not a zombie).
    @Test func speechIsMadeInTheHelperAndTheHelperGoesWhenReleased() throws {
        let samples = try SpeechSynthesizer().synthesize(text: "Door open.", phonemes: false)
        #expect(AudioMeasures.rms(samples) > 0.02)
        let helper = try #require(SpeechSynthesizer.engineProcessID)
        let command = try Self.proc("\(helper)/comm")
        #expect(command == "earshot-speak\n")
        #expect(try Self.proc("\(helper)/maps").contains("libespeak-ng"))
        for library in ["libespeak-ng", "libpcaudio"] { #expect(try !Self.mapped(library), "\(library) mapped here") }
        SpeechSynthesizer.releaseEngine()
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(helper)"), "the released helper \(helper) is still there")
    }

    /// Released (the helper ended) between syntheses, the engine starts again each time
    /// and speaks as before. (Here, in this serialized suite: the other suites' speech only
    /// starts the helper.)
    @Test func theSpeechEngineSpeaksAgainAfterEachRelease() throws {
        let renderer = AlertAudioRenderer()
        let first = try renderer.render(SpeechChunk(kind: .text, text: "hello again"))
        for _ in 0..<3 {
            SpeechSynthesizer.releaseEngine()
            let again = try renderer.render(SpeechChunk(kind: .text, text: "hello again"))
            #expect(AudioMeasures.rms(again) > 0.02)
            #expect(abs(Double(again.count - first.count)) / Double(first.count) < 0.05, "\(first.count) then \(again.count) samples")
        }
    }

    /// A helper that dies is replaced at the next synthesis, which is answered all the same.
    @Test func aHelperThatDiesIsReplaced() throws {
        let synthesizer = try SpeechSynthesizer()
        let before = try synthesizer.synthesize(text: "Low fuel.", phonemes: false)
        let helper = try #require(SpeechSynthesizer.engineProcessID)
        kill(helper, SIGKILL)
        let after = try synthesizer.synthesize(text: "Low fuel.", phonemes: false)
        #expect(abs(Double(after.count - before.count)) / Double(before.count) < 0.05, "\(before.count) then \(after.count) samples")
        let replacement = try #require(SpeechSynthesizer.engineProcessID)
        #expect(replacement != helper)
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(helper)"), "the dead helper \(helper) was not reaped")
    }

    @Test func concurrentCallsAreSerializedAndAgree() async throws {
        let synthesizer = try SpeechSynthesizer()
        let sentences = ["Turn left ahead.", "Low fuel.", "Call from home.", "Door open."]
        let serial = try sentences.map { try synthesizer.synthesize(text: $0, phonemes: false) }
        let parallel = try await withThrowingTaskGroup(of: (Int, [Int16]).self) { group in
            for (index, sentence) in sentences.enumerated() {
                group.addTask { (index, try synthesizer.synthesize(text: sentence, phonemes: false)) }
            }
            var results = [[Int16]](repeating: [], count: sentences.count)
            for try await (index, samples) in group { results[index] = samples }
            return results
        }
        // espeak-ng carries a little state from one utterance to the next, so the samples
        // need not be identical in another order; each must still be the whole utterance.
        for index in sentences.indices {
            let ratio = Double(parallel[index].count) / Double(serial[index].count)
            #expect(ratio > 0.9 && ratio < 1.1, "\(sentences[index]): \(parallel[index].count) vs \(serial[index].count) samples")
            #expect(AudioMeasures.rms(parallel[index]) > 0.02)
        }
    }
}
