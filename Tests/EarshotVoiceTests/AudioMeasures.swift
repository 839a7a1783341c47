/// Simple measures of mono signed 16-bit audio for the tests.
enum AudioMeasures {
    /// Root mean square, as a fraction of full scale.
    static func rms(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot() / 32768
    }

    /// The loudest sample, as a fraction of full scale.
    static func peak(_ samples: [Int16]) -> Double {
        Double(samples.map { Int($0).magnitude }.max() ?? 0) / 32768
    }

    /// Sign changes from negative to non-negative.
    static func upwardZeroCrossings(_ samples: [Int16]) -> Int {
        var count = 0
        for index in samples.indices.dropFirst() where samples[index - 1] < 0 && samples[index] >= 0 {
            count += 1
        }
        return count
    }

    /// Mean absolute difference over the common length plus the length difference counted
    /// as full-scale difference, as a fraction of full scale.
    static func difference(_ a: [Int16], _ b: [Int16]) -> Double {
        let common = min(a.count, b.count)
        var sum = 0.0
        for index in 0 ..< common { sum += abs(Double(a[index]) - Double(b[index])) }
        sum += Double(max(a.count, b.count) - common) * 32768
        return sum / Double(max(1, max(a.count, b.count))) / 32768
    }
}
