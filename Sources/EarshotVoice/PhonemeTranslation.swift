/// A phoneme chunk that cannot be converted: `symbol` is not in the phone set's table.
public struct UnknownPhonemeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// "SAPI_PHONEMES" or "LHPLUS_PHONEMES".
    public let phoneSet: String
    /// The symbol that has no espeak-ng equivalent.
    public let symbol: String

    public var description: String {
        "\(phoneSet): unknown phoneme symbol '\(symbol)'"
    }
}

/// Conversion of the contract's phoneme chunks (`SAPI_PHONEMES`, `LHPLUS_PHONEMES`, US
/// English) into espeak-ng phoneme mnemonics for English voices, to be spoken as
/// `[[ … ]]` (see `SpeechSynthesizer.synthesize(text:phonemes:)`).
///
/// Output: phonemes separated by `|`, words by spaces, e.g. "h|@|l|'oU w|'3:|l|d".
/// Stress: espeak-ng puts `'` (primary) or `,` (secondary) right before the stressed vowel.
/// Both input conventions are moved there: SAPI's digit after the vowel, and L&H+'s mark
/// before the syllable.
public enum PhonemeTranslation {
    /// One output unit while converting: a mnemonic, and whether it is a vowel (a stress
    /// mark can attach to it).
    private struct Unit {
        var mnemonic: String
        var isVowel: Bool
        var stress = ""
    }

    // MARK: - SAPI

    /// The US English SAPI phone set (Microsoft SAPI 5 "American English Phoneme Table"):
    /// vowels to espeak-ng's en-us vowels.
    static let sapiVowels: [String: String] = [
        "aa": "A:", "ae": "a", "ah": "V", "ao": "O:", "aw": "aU", "ax": "@", "ay": "aI",
        "eh": "E", "er": "3:", "ey": "eI", "ih": "I", "iy": "i:", "ow": "oU", "oy": "OI",
        "uh": "U", "uw": "u:",
    ]

    /// SAPI consonants to espeak-ng consonants.
    static let sapiConsonants: [String: String] = [
        "b": "b", "ch": "tS", "d": "d", "dh": "D", "f": "f", "g": "g", "h": "h", "jh": "dZ",
        "k": "k", "l": "l", "m": "m", "n": "n", "ng": "N", "p": "p", "r": "r", "s": "s",
        "sh": "S", "t": "t", "th": "T", "v": "v", "w": "w", "y": "j", "z": "z", "zh": "Z",
    ]

    /// Converts a `SAPI_PHONEMES` text: space-separated SAPI symbols, each vowel optionally
    /// followed by a stress digit (`1` primary, `2` secondary, `0` none), either as its own
    /// token ("eh 1") or attached ("eh1"). `-` (syllable boundary) is dropped, `&` (word
    /// boundary) becomes a space, `_` a short pause, `,` `.` `?` `!` a longer one. Symbols
    /// are case-insensitive. Example: "h eh 1 l ow" → "h|'E|l|oU".
    public static func espeakFromSAPI(_ text: String) throws(UnknownPhonemeError) -> String {
        var units: [Unit] = []
        for rawToken in text.split(whereSeparator: \.isWhitespace) {
            var token = rawToken.lowercased()
            var stress: Character?
            if token.count > 1, let last = token.last, "012".contains(last) {
                stress = last
                token.removeLast()
            }
            if token.count == 1, "012".contains(token) {
                try applySAPIStress(Character(token), to: &units, token: token)
                continue
            }
            switch token {
            case "-": break
            case "&": units.append(Unit(mnemonic: " ", isVowel: false))
            case "_": units.append(Unit(mnemonic: "_", isVowel: false))
            case ",", ".", "?", "!": units.append(Unit(mnemonic: "_:", isVowel: false))
            default:
                if let vowel = sapiVowels[token] {
                    units.append(Unit(mnemonic: vowel, isVowel: true))
                } else if let consonant = sapiConsonants[token] {
                    units.append(Unit(mnemonic: consonant, isVowel: false))
                } else {
                    throw UnknownPhonemeError(phoneSet: "SAPI_PHONEMES", symbol: String(rawToken))
                }
            }
            if let stress { try applySAPIStress(stress, to: &units, token: String(rawToken)) }
        }
        return render(units)
    }

    /// Puts a SAPI stress digit on the last vowel; a digit with no vowel before it (or
    /// after a consonant) is unknown input.
    private static func applySAPIStress(_ digit: Character, to units: inout [Unit], token: String) throws(UnknownPhonemeError) {
        guard let last = units.indices.last, units[last].isVowel else {
            throw UnknownPhonemeError(phoneSet: "SAPI_PHONEMES", symbol: token)
        }
        units[last].stress = digit == "1" ? "'" : digit == "2" ? "," : ""
    }

    // MARK: - L&H+

    /// L&H+ / X-SAMPA vowels (US English) to espeak-ng vowels. Includes L&H+'s tied
    /// diphthongs (`e_I`), its `^` (strut) and `$` (schwa), X-SAMPA's `{` (trap), length
    /// marks and r-coloured vowels.
    static let lhplusVowels: [String: String] = [
        "i": "i:", "i:": "i:", "I": "I", "e": "E", "E": "E", "{": "a", "@": "@", "$": "@",
        "a": "a", "A": "A:", "A:": "A:", "Q": "0", "O": "O:", "O:": "O:", "o": "oU",
        "U": "U", "u": "u:", "u:": "u:", "V": "V", "^": "V", "3": "3:", "3:": "3:",
        "3`": "3:", "@`": "3", "3r": "3:",
        "eI": "eI", "e_I": "eI", "aI": "aI", "a_I": "aI", "OI": "OI", "O_I": "OI",
        "oU": "oU", "o_U": "oU", "@U": "oU", "aU": "aU", "a_U": "aU",
        "I@": "i@", "e@": "e@", "E@": "e@", "U@": "U@", "A@": "A@", "O@": "O@",
        "l=": "@L", "n=": "@n", "m=": "@m",
    ]

    /// L&H+ / X-SAMPA consonants to espeak-ng consonants (`4` is the flap, spoken as t).
    static let lhplusConsonants: [String: String] = [
        "p": "p", "b": "b", "t": "t", "d": "d", "k": "k", "g": "g", "f": "f", "v": "v",
        "T": "T", "D": "D", "s": "s", "z": "z", "S": "S", "Z": "Z", "h": "h", "m": "m",
        "n": "n", "N": "N", "l": "l", "r": "r", "r\\": "r", "R": "r", "w": "w", "j": "j",
        "tS": "tS", "t_S": "tS", "dZ": "dZ", "d_Z": "dZ", "4": "t", "?": "?",
    ]

    /// The longest L&H+ symbol, in characters.
    private static let longestLHPlusSymbol = (lhplusVowels.keys.map(\.count) + lhplusConsonants.keys.map(\.count)).max() ?? 1

    /// Converts a `LHPLUS_PHONEMES` text (L&H+ / X-SAMPA, case-sensitive), e.g. "h@'loU".
    /// Symbols are matched longest first and need no separators. `'` or `"` marks primary
    /// stress and `%` or `,` secondary, for the next vowel; `.` and `-` (syllable
    /// boundaries) are dropped; whitespace and `#` separate words; `_` alone is a short
    /// pause.
    public static func espeakFromLHPlus(_ text: String) throws(UnknownPhonemeError) -> String {
        var units: [Unit] = []
        var pendingStress = ""
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace || character == "#" {
                if units.last?.mnemonic != " " { units.append(Unit(mnemonic: " ", isVowel: false)) }
                index += 1
                continue
            }
            switch character {
            case "'", "\"": pendingStress = "'"; index += 1; continue
            case "%", ",": pendingStress = ","; index += 1; continue
            case ".", "-": index += 1; continue
            default: break
            }
            var matched = false
            for length in stride(from: min(longestLHPlusSymbol, characters.count - index), through: 1, by: -1) {
                let symbol = String(characters[index ..< index + length])
                if let vowel = lhplusVowels[symbol] {
                    units.append(Unit(mnemonic: vowel, isVowel: true, stress: pendingStress))
                    pendingStress = ""
                } else if let consonant = lhplusConsonants[symbol] {
                    units.append(Unit(mnemonic: consonant, isVowel: false))
                } else {
                    continue
                }
                index += length
                matched = true
                break
            }
            if matched { continue }
            if character == "_" {
                units.append(Unit(mnemonic: "_", isVowel: false))
                index += 1
                continue
            }
            throw UnknownPhonemeError(phoneSet: "LHPLUS_PHONEMES", symbol: String(character))
        }
        while units.last?.mnemonic == " " { units.removeLast() }
        while units.first?.mnemonic == " " { units.removeFirst() }
        return render(units)
    }

    /// Joins units with each stress mark before its vowel, and `|` between neighbouring
    /// phonemes: espeak-ng reads `|` as "two phonemes here", so `a` then `I` stays two
    /// vowels instead of becoming the diphthong `aI`.
    private static func render(_ units: [Unit]) -> String {
        var result = ""
        var previousWasPhoneme = false
        for unit in units {
            let isPhoneme = unit.mnemonic != " " && !unit.mnemonic.hasPrefix("_")
            if isPhoneme && previousWasPhoneme { result += "|" }
            result += unit.stress + unit.mnemonic
            previousWasPhoneme = isPhoneme
        }
        return result
    }
}
