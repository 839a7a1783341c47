import SessionCore
import Testing

@Suite struct ActivationBookTests {
    let solo = try! CategoryConfiguration(category: .playback)
    let record = try! CategoryConfiguration(category: .record)
    let mixing = try! CategoryConfiguration(category: .playback, options: [.mixWithOthers])
    let ducking = try! CategoryConfiguration(category: .playback, options: [.duckOthers])
    let ambient = try! CategoryConfiguration(category: .ambient)

    @Test func nonMixableInterruptsNonMixable() {
        var book = ActivationBook()
        #expect(book.activate(id: 1, owner: ":1.1", configuration: solo) == [])
        #expect(book.activate(id: 2, owner: ":1.2", configuration: ambient) == [])
        #expect(book.activate(id: 3, owner: ":1.3", configuration: record) == [.interruptionBegan(1, by: 3)])
        #expect(book[1]?.interrupted == true)
        #expect(book[2]?.interrupted == false)  // mixable ones play on
        #expect(book.deactivate(id: 3) == [.interruptionEnded(1, shouldResume: true)])
        #expect(book[1]?.interrupted == false)
    }

    @Test func mixableInterruptsNobody() {
        var book = ActivationBook()
        _ = book.activate(id: 1, owner: ":1.1", configuration: solo)
        #expect(book.activate(id: 2, owner: ":1.2", configuration: mixing) == [])
        #expect(book.deactivate(id: 2) == [])
    }

    @Test func duckingDucksAndUnducks() {
        var book = ActivationBook()
        _ = book.activate(id: 1, owner: ":1.1", configuration: solo)
        _ = book.activate(id: 2, owner: ":1.2", configuration: ambient)
        #expect(book.activate(id: 3, owner: ":1.3", configuration: ducking) == [.duckingChanged(1, ducked: true), .duckingChanged(2, ducked: true)])
        #expect(book.activate(id: 4, owner: ":1.4", configuration: ducking) == [.duckingChanged(3, ducked: true)])
        #expect(book.deactivate(id: 3) == [])  // 4 still ducks 1 and 2
        #expect(book.deactivate(id: 4) == [.duckingChanged(1, ducked: false), .duckingChanged(2, ducked: false)])
    }

    @Test func interruptionEndsOnlyWhenTheLastInterrupterLeaves() {
        var book = ActivationBook()
        _ = book.activate(id: 1, owner: ":1.1", configuration: solo)
        #expect(book.activate(id: 2, owner: ":1.2", configuration: solo) == [.interruptionBegan(1, by: 2)])
        #expect(book.activate(id: 3, owner: ":1.3", configuration: record) == [.interruptionBegan(2, by: 3)])  // 1 already is
        #expect(book.deactivate(id: 2) == [])
        #expect(book.deactivate(id: 3) == [.interruptionEnded(1, shouldResume: true)])
        #expect(book.deactivate(id: 3) == [])
    }

    @Test func ownerVanishingEndsItsActivations() {
        var book = ActivationBook()
        _ = book.activate(id: 1, owner: ":1.1", configuration: solo)
        _ = book.activate(id: 2, owner: ":1.2", configuration: solo)
        _ = book.activate(id: 3, owner: ":1.2", configuration: ducking)
        let (ended, events) = book.ownerVanished(":1.2")
        #expect(ended == [2, 3])
        #expect(events == [.interruptionEnded(1, shouldResume: true)])
        #expect(book.activations.keys.sorted() == [1])
    }

    @Test func activationsAreLimitedPerOwnerAndInAll() {
        var book = ActivationBook()
        var id: UInt64 = 0
        for _ in 0 ..< ActivationBook.limitPerOwner {
            #expect(book.refusal(forAnotherOf: ":1.1") == nil)
            id += 1
            _ = book.activate(id: id, owner: ":1.1", configuration: mixing)
        }
        #expect(book.refusal(forAnotherOf: ":1.1")?.contains(":1.1 already holds 32 activations") == true)
        #expect(book.refusal(forAnotherOf: ":1.2") == nil)
        _ = book.deactivate(id: 1)
        #expect(book.refusal(forAnotherOf: ":1.1") == nil)

        var owner = 2
        while book.activations.count < ActivationBook.limit {
            id += 1
            _ = book.activate(id: id, owner: ":1.\(owner)", configuration: mixing)
            if id % 16 == 0 { owner += 1 }
        }
        #expect(book.refusal(forAnotherOf: ":1.999")?.contains("already 256 activations") == true)
        _ = book.ownerVanished(":1.2")
        #expect(book.refusal(forAnotherOf: ":1.999") == nil)
    }
}
