import Foundation

/// The live level meter of `earshot capture`: per chunk the peak and RMS level in dBFS,
/// drawn as a bar on one terminal line (redrawn with `\r`).
struct LevelMeter {
    let bitsPerSample: UInt32
    static let floorDB = -60.0
    static let width = 30

    /// Peak and RMS of interleaved samples, each 0...1 of full scale.
    static func levels(_ samples: [UInt8], bitsPerSample: UInt32) -> (peak: Double, rms: Double) {
        var peak = 0.0
        var sumOfSquares = 0.0
        var count = 0
        if bitsPerSample == 8 {
            for byte in samples {
                let value = abs(Double(Int(byte) - 128) / 128)
                peak = max(peak, value)
                sumOfSquares += value * value
            }
            count = samples.count
        } else {
            var index = 0
            while index + 1 < samples.count {
                let raw = Int16(bitPattern: UInt16(samples[index]) | UInt16(samples[index + 1]) << 8)
                let value = abs(Double(raw) / 32768)
                peak = max(peak, value)
                sumOfSquares += value * value
                index += 2
                count += 1
            }
        }
        guard count > 0 else { return (0, 0) }
        return (peak, (sumOfSquares / Double(count)).squareRoot())
    }

    static func decibels(_ level: Double) -> Double {
        level > 0 ? max(floorDB, 20 * log10(level)) : floorDB
    }

    /// The meter line for a chunk after `seconds` of audio: bar to the RMS level, `|` at
    /// the peak, then both in dBFS.
    func line(seconds: Double, samples: [UInt8]) -> String {
        let (peak, rms) = Self.levels(samples, bitsPerSample: bitsPerSample)
        let peakDB = Self.decibels(peak)
        let rmsDB = Self.decibels(rms)
        func cells(_ db: Double) -> Int { Int(((db - Self.floorDB) / -Self.floorDB * Double(Self.width)).rounded()) }
        let filled = cells(rmsDB)
        let peakAt = min(Self.width - 1, max(0, cells(peakDB) - 1))
        var bar = (0..<Self.width).map { $0 < filled ? "█" : " " }
        if peak > 0 { bar[peakAt] = "|" }
        return Self.clear + String(format: "%6.1f s ", seconds) + "[" + bar.joined() + "]"
            + String(format: " peak %5.1f dBFS  rms %5.1f dBFS", peakDB, rmsDB)
    }

    /// Erases the meter line.
    static let clear = "\r\u{1B}[2K"
}
