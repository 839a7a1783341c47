import Testing
@testable import EarshotVoice

@Suite("Jingles and the tone")
struct JingleTests {
    @Test func everyContractJingleHasAMotif() {
        #expect(Set(Jingle.allCases.map(\.rawValue)) == Set(["HELP_JINGLE", "INITIAL_JINGLE", "LISTEN_JINGLE",
                                                              "POSITIVE_JINGLE", "NEGATIVE_JINGLE"]))
        #expect(Jingle(name: "NO_JINGLE") == nil)
    }

    @Test func jinglesAreAudibleAndShort() {
        for jingle in Jingle.allCases {
            let samples = jingle.render(sampleRate: 22050)
            let seconds = Double(samples.count) / 22050
            #expect(seconds > 0.2 && seconds < 1.5, "\(jingle): \(seconds) s")
            #expect(AudioMeasures.rms(samples) > 0.05, "\(jingle)")
            #expect(abs(AudioMeasures.peak(samples) - 0.5) < 0.01, "\(jingle)")
            // Starts and ends without a click.
            #expect(abs(Int(samples.first ?? 0)) < 200 && abs(Int(samples.last ?? 0)) < 200, "\(jingle)")
        }
    }

    @Test func jinglesArePairwiseDistinct() {
        let rendered = Jingle.allCases.map { ($0, $0.render(sampleRate: 22050)) }
        for (i, first) in rendered.enumerated() {
            for second in rendered[(i + 1)...] {
                let difference = AudioMeasures.difference(first.1, second.1)
                #expect(difference > 0.05, "\(first.0) vs \(second.0): \(difference)")
            }
            let fromTone = AudioMeasures.difference(first.1, Tone.render(sampleRate: 22050))
            #expect(fromTone > 0.05, "\(first.0) vs the tone: \(fromTone)")
        }
    }

    @Test func renderingFollowsTheRate() {
        for jingle in Jingle.allCases {
            let low = jingle.render(sampleRate: 16000)
            let high = jingle.render(sampleRate: 48000)
            #expect(abs(low.count * 3 - high.count) <= 3, "\(jingle): \(low.count) vs \(high.count)")
        }
    }

    @Test func toneIsAShortA5Chime() {
        let samples = Tone.render(sampleRate: 22050)
        #expect(samples.count == 5513) // 0.25 s
        #expect(AudioMeasures.rms(samples) > 0.05)
        // 880 Hz fundamental: about 220 upward zero crossings in 0.25 s (harmonics add none
        // at these levels).
        let crossings = AudioMeasures.upwardZeroCrossings(samples)
        #expect(abs(crossings - 220) <= 5, "\(crossings)")
    }
}
