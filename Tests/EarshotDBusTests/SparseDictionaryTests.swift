import EarshotSync
import Testing

/// `Dictionary.shrinkIfSparse`: room for entries removed long ago goes back; what is left
/// stays.
@Suite struct SparseDictionaryTests {
    @Test func aDictionaryEmptiedAfterABurstShrinksAndKeepsItsEntries() {
        var table: [UInt64: String] = [:]
        for id in 0..<10_000 as Range<UInt64> { table[id] = "job \(id)" }
        let burstCapacity = table.capacity
        for id in 0..<9_990 as Range<UInt64> {
            table.removeValue(forKey: id)
            table.shrinkIfSparse()
        }
        #expect(table.capacity < burstCapacity / 100, "capacity \(table.capacity) after the burst's \(burstCapacity)")
        #expect(table.count == 10)
        for id in 9_990..<10_000 as Range<UInt64> { #expect(table[id] == "job \(id)") }
    }

    @Test func aDictionaryInUseIsLeftAlone() {
        var table: [Int: Int] = [:]
        for key in 0..<1000 { table[key] = key }
        let capacity = table.capacity
        for key in 0..<200 { table.removeValue(forKey: key) }
        table.shrinkIfSparse()
        #expect(table.capacity == capacity)
        var small: [Int: Int] = [1: 1]
        small.shrinkIfSparse()
        #expect(small.capacity >= 1 && small[1] == 1)
    }
}
