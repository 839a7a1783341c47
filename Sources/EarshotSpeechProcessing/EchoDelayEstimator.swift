import Glibc

/// How long the far end (what the speakers play) takes to reach the microphone, measured
/// from the two signals: the delay at which the microphone's short-term level follows the
/// far end's best.
///
/// Both are reduced to the log-energy of 2 ms blocks; for each delay from 0 to `maxDelay` the normalized correlation of the
/// microphone's last `window` blocks with the far end that many blocks earlier is computed, and the best delay counts once its correlation
/// reaches `minimumCorrelation`. Plain arithmetic, no audio library: tested on its own.
public struct EchoDelayEstimator: Sendable {
    public let rate: Int
    /// Samples per block.
    public let blockSize: Int
    public let maxDelayBlocks: Int
    public let windowBlocks: Int
    public let minimumCorrelation: Double

    /// Log-energies of the far end's blocks, in its own timeline (block 0 is its first).
    private var far: [Double] = []
    private var farPartial = (sum: 0.0, count: 0)
    /// Log-energies of the microphone's blocks, from `nearStart` on.
    private var near: [Double] = []
    private var nearPartial = (sum: 0.0, count: 0)
    /// The microphone's block at which the far end's block 0 was played, nominally.
    private var farOriginBlock = 0
    /// Microphone blocks no longer kept.
    private var nearDropped = 0

    public init(rate: Int, maxDelayMs: Int = 1000, windowMs: Int = 750, minimumCorrelation: Double = 0.5) {
        self.rate = rate
        blockSize = max(1, rate / 500)
        maxDelayBlocks = maxDelayMs / 2
        windowBlocks = windowMs / 2
        self.minimumCorrelation = minimumCorrelation
    }

    /// The far end's nominal start: its first sample played with the microphone's sample
    /// `nearSample` (rounded to a block).
    public mutating func farStarts(atNearSample nearSample: Int) {
        farOriginBlock = nearSample / blockSize
    }

    public mutating func addFar(_ samples: some Collection<Float>) {
        Self.accumulate(samples, blockSize: blockSize, into: &far, partial: &farPartial)
    }

    public mutating func addNear(_ samples: some Collection<Float>) {
        Self.accumulate(samples, blockSize: blockSize, into: &near, partial: &nearPartial)
        // Keep what a window at the longest delay can reach.
        let keep = windowBlocks + 8
        if near.count > 4 * keep {
            let drop = near.count - keep
            near.removeFirst(drop)
            nearDropped += drop
        }
    }

    /// Appends each complete block's log-energy.
    private static func accumulate(_ samples: some Collection<Float>, blockSize: Int, into blocks: inout [Double],
                                   partial: inout (sum: Double, count: Int)) {
        for sample in samples {
            partial.sum += Double(sample) * Double(sample)
            partial.count += 1
            if partial.count == blockSize {
                blocks.append(log10(partial.sum / Double(blockSize) + 1e-10))
                partial = (0, 0)
            }
        }
    }

    /// The measured delay in samples beyond the far end's nominal timing, with its
    /// correlation; nil while the microphone's last window overlaps too little far end
    /// or nothing correlates well enough.
    /// The level follows the direct sound and the cabin's reverberation after it, which
    /// draws out each decay: the delay found is that of the direct sound or up to about
    /// 50 ms later (measured 25-45 ms on cabins with a 40 ms decay), never earlier.
    ///
    /// `around`, when given, limits the delays tried to 50 ms either side of it (following
    /// drift once the delay is known costs a tenth of finding it).
    public func estimate(around: Int? = nil) -> (delaySamples: Int, correlation: Double)? {
        let totalNear = nearDropped + near.count
        // Half a window is enough to begin with: a delay found early is confirmed by the next.
        guard near.count >= windowBlocks / 2 else { return nil }
        let window = min(windowBlocks, near.count)
        let windowStart = totalNear - window  // in the microphone's block timeline
        var best: (lag: Int, correlation: Double)?
        let lags = around.map { max(0, $0 / blockSize - 25) ... min(maxDelayBlocks, $0 / blockSize + 25) } ?? 0 ... maxDelayBlocks
        for lag in lags {
            // Microphone block b pairs with far block b - farOrigin - lag.
            var pairs = 0
            var sumX = 0.0, sumY = 0.0, sumXX = 0.0, sumYY = 0.0, sumXY = 0.0
            for block in windowStart ..< totalNear {
                let farIndex = block - farOriginBlock - lag
                guard farIndex >= 0, farIndex < far.count else { continue }
                let x = near[block - nearDropped], y = far[farIndex]
                pairs += 1
                sumX += x; sumY += y; sumXX += x * x; sumYY += y * y; sumXY += x * y
            }
            guard pairs >= window / 2 else { continue }
            let n = Double(pairs)
            let covariance = sumXY - sumX * sumY / n
            let varianceX = sumXX - sumX * sumX / n, varianceY = sumYY - sumY * sumY / n
            guard varianceX > 1e-9, varianceY > 1e-9 else { continue }
            let correlation = covariance / (varianceX * varianceY).squareRoot()
            if correlation > (best?.correlation ?? -2) { best = (lag, correlation) }
        }
        guard let best, best.correlation >= minimumCorrelation else { return nil }
        return (best.lag * blockSize, best.correlation)
    }
}
