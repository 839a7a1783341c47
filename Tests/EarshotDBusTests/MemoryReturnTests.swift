import EarshotService
import Glibc
import Testing

/// `MemoryReturn.trimSoon`: heap memory freed in the middle of the heap (which glibc keeps
/// resident) goes back to the system about a second after it is asked for.
@Suite struct MemoryReturnTests {
    /// 512 blocks of 64 KiB: below the mmap threshold, so they come from a heap.
    static let blockSize = 64 * 1024
    static let blockCount = 512

    /// Runs in a process of its own: the other tests of this target, run alongside in one
    /// process, share its heaps, and would reuse (and so make resident again) the freed
    /// pages this test watches, or hold the threads its trim waits for.
    @Test func memoryFreedInTheHeapGoesBackSoonAfterTrimSoon() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let (before, after) = try await MemoryReturnTests.freeMidHeapAndTrimSoon()
            let report = "\(before) of the freed pages resident before the trim, \(after) after\n"
            _ = report.withCString { write(2, $0, strlen($0)) }
            // Most of the freed pages are resident before the trim, at most half after it.
            exit(before > 0.9 && after <= 0.5 ? 0 : 1)
        }
        if let result {
            print("trimSoon:", String(decoding: result.standardErrorContent, as: UTF8.self), terminator: "")
        }
    }

    /// Frees 32 MiB in the middle of a heap, calls `trimSoon`, and waits up to 4 s for the
    /// freed pages to leave memory; returns the share of them resident before and after.
    static func freeMidHeapAndTrimSoon() async throws -> (before: Double, after: Double) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0...blockCount {
            let block = try #require(malloc(blockSize))
            memset(block, 0x5a, blockSize)
            blocks.append(block)
        }
        // The highest block stays allocated: it keeps the freed ones away from the heap's
        // top, which free() itself gives back.
        blocks.sort { UInt(bitPattern: $0) < UInt(bitPattern: $1) }
        let fence = blocks.removeLast()
        defer { free(fence) }
        // The whole pages inside each block, which free() leaves resident.
        let interiors = blocks.map { block -> (UnsafeMutableRawPointer, Int) in
            let start = (Int(bitPattern: block) + 64 + page - 1) / page * page
            let end = (Int(bitPattern: block) + blockSize) / page * page
            return (UnsafeMutableRawPointer(bitPattern: start)!, end - start)
        }
        blocks.forEach { free($0) }

        let before = residentShare(interiors, page: page)
        MemoryReturn.trimSoon()
        var after = before
        for _ in 0..<40 where after > 0.5 {
            try await Task.sleep(for: .milliseconds(100))
            after = residentShare(interiors, page: page)
        }
        return (before, after)
    }

    /// The share of the pages in `ranges` that are resident (mincore).
    static func residentShare(_ ranges: [(UnsafeMutableRawPointer, Int)], page: Int) -> Double {
        var resident = 0
        var total = 0
        for (start, length) in ranges where length > 0 {
            var vector = [UInt8](repeating: 0, count: length / page)
            guard mincore(start, length, &vector) == 0 else { continue }
            resident += vector.filter { $0 & 1 != 0 }.count
            total += vector.count
        }
        return total == 0 ? 0 : Double(resident) / Double(total)
    }
}
