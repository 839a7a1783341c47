import Testing
@testable import EarshotVoice

@Suite("SAPI and L&H+ phonemes to espeak-ng")
struct PhonemeTranslationTests {
    @Test(arguments: [
        ("h eh 1 l ow", "h|'E|l|oU"),                    // hello
        ("h ax l ow 1", "h|@|l|'oU"),                    // hello, stressed at the end
        ("w er 1 l d", "w|'3:|l|d"),                     // world
        ("ch er 1 ch", "tS|'3:|tS"),                     // church
        ("jh ah 1 jh", "dZ|'V|dZ"),                      // judge
        ("th ih 1 ng k", "T|'I|N|k"),                    // think
        ("m eh 1 zh er", "m|'E|Z|3:"),                   // measure
        ("n ae 1 v ax g ey 2 sh ax n", "n|'a|v|@|g|,eI|S|@|n"), // navigation
        ("f aa 1 dh er", "f|'A:|D|3:"),                  // father
        ("t oy 1 & b uh 1 k", "t|'OI b|'U|k"),           // toy book
        ("Y EH1 S", "j|'E|s"),                           // yes, attached digit, upper case
        ("k ae 1 t - s", "k|'a|t|s"),                    // syllable boundary dropped
        ("n ow 1 .", "n|'oU_:"),                         // final pause
    ])
    func sapi(input: String, expected: String) throws {
        #expect(try PhonemeTranslation.espeakFromSAPI(input) == expected)
    }

    @Test func sapiUnknownSymbolIsNamed() {
        #expect(throws: UnknownPhonemeError(phoneSet: "SAPI_PHONEMES", symbol: "qx")) {
            try PhonemeTranslation.espeakFromSAPI("h qx l ow")
        }
        // A stress digit needs a vowel before it.
        #expect(throws: UnknownPhonemeError(phoneSet: "SAPI_PHONEMES", symbol: "1")) {
            try PhonemeTranslation.espeakFromSAPI("h 1 eh")
        }
    }

    @Test(arguments: [
        ("h@'loU", "h|@|l|'oU"),                         // hello, X-SAMPA, stress before the syllable
        ("h$'lo_U", "h|@|l|'oU"),                        // hello, L&H+ schwa and tie
        ("'w3`ld", "w|'3:|l|d"),                         // world
        ("'k{t", "k|'a|t"),                              // cat
        ("'k^t", "k|'V|t"),                              // cut
        ("'t_S3`t_S", "tS|'3:|tS"),                      // church
        ("'fA:D@`", "f|'A:|D|3"),                        // father
        ("'neIv@.%geI.S@n", "n|'eI|v|@|g|,eI|S|@|n"),    // navigation (last stress secondary)
        ("'jEs 'noU", "j|'E|s n|'oU"),                   // yes no
        ("\"TIN#'bUk", "T|'I|N b|'U|k"),                 // think book, " and #
    ])
    func lhplus(input: String, expected: String) throws {
        #expect(try PhonemeTranslation.espeakFromLHPlus(input) == expected)
    }

    @Test func lhplusUnknownSymbolIsNamed() {
        #expect(throws: UnknownPhonemeError(phoneSet: "LHPLUS_PHONEMES", symbol: "!")) {
            try PhonemeTranslation.espeakFromLHPlus("h@'lo!")
        }
        #expect(throws: UnknownPhonemeError(phoneSet: "LHPLUS_PHONEMES", symbol: "x")) {
            try PhonemeTranslation.espeakFromLHPlus("'lOx")
        }
    }

    @Test func translatedPhonemesAreSpoken() throws {
        let synthesizer = try SpeechSynthesizer()
        for mnemonics in [try PhonemeTranslation.espeakFromSAPI("h eh 1 l ow & w er 1 l d"),
                          try PhonemeTranslation.espeakFromLHPlus("h@'loU 'w3`ld")] {
            let samples = try synthesizer.synthesize(text: mnemonics, phonemes: true)
            let seconds = Double(samples.count) / Double(synthesizer.sampleRate)
            #expect(seconds > 0.4 && seconds < 2.5, "\(mnemonics): \(seconds) s")
            #expect(AudioMeasures.rms(samples) > 0.02, "\(mnemonics)")
        }
    }
}
