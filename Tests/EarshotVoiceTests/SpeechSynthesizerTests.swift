import Testing
@testable import EarshotVoice

@Suite("espeak-ng speech in process")
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
