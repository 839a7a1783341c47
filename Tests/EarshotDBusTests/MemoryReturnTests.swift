import EarshotService
import Glibc
import Testing

/// `MemoryReturn.trimSoon`: heap memory freed in the middle of the heap (which glibc keeps
/// resident) goes back to the system about a second after it is asked for.
@Suite struct MemoryReturnTests {
    /// 512 blocks of 64 KiB: below the mmap threshold, so they come from a heap.
    static let blockSize = 64 * 1024
    static let blockCount = 512

    @Test func memoryFreedInTheHeapGoesBackSoonAfterTrimSoon() async throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0...Self.blockCount {
            let block = try #require(malloc(Self.blockSize))
            memset(block, 0x5a, Self.blockSize)
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
            let end = (Int(bitPattern: block) + Self.blockSize) / page * page
            return (UnsafeMutableRawPointer(bitPattern: start)!, end - start)
        }
        blocks.forEach { free($0) }

        let before = Self.residentShare(interiors, page: page)
        #expect(before > 0.9, "only \(before) of the freed pages were resident before the trim")
        MemoryReturn.trimSoon()
        var after = before
        for _ in 0..<40 where after > 0.5 {
            try await Task.sleep(for: .milliseconds(100))
            after = Self.residentShare(interiors, page: page)
        }
        #expect(after <= 0.5, "\(after) of the freed pages still resident 4 s after trimSoon")
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
