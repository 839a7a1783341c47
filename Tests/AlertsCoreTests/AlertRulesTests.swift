import AlertsCore
import ContractCore
import Testing

@Suite struct AlertRulesTests {
    @Test func layoutForZeroToThreeLines() {
        let texts = ["Fuel low", "12 km left", "Next station 3 km"]
        #expect(TextLayout.lines(texts, displayLines: 3) == texts)
        #expect(TextLayout.lines(texts, displayLines: 2) == ["Fuel low", "12 km left - Next station 3 km"])
        #expect(TextLayout.lines(texts, displayLines: 1) == ["Fuel low - 12 km left - Next station 3 km"])
        #expect(TextLayout.lines(texts, displayLines: 0) == [])
        #expect(TextLayout.lines(["", "Only second", ""], displayLines: 3) == ["Only second"])
        #expect(TextLayout.lines(["One", "", "Three"], displayLines: 2) == ["One", "Three"])
        #expect(TextLayout.lines(["One", "", ""], displayLines: 2) == ["One"])
        #expect(TextLayout.lines(["", "", ""], displayLines: 3) == [])
    }

    @Test func timeoutRules() {
        #expect(AlertTimeouts.effective(requested: nil, defaultTimeout: 5, hasButtons: false, buttonTimeout: 60) == 5)
        #expect(AlertTimeouts.effective(requested: 0, defaultTimeout: 7, hasButtons: false, buttonTimeout: 60) == 7)
        #expect(AlertTimeouts.effective(requested: 2.9, defaultTimeout: 5, hasButtons: false, buttonTimeout: 60) == 3)
        #expect(AlertTimeouts.effective(requested: 3, defaultTimeout: 5, hasButtons: false, buttonTimeout: 60) == 3)
        #expect(AlertTimeouts.effective(requested: 10, defaultTimeout: 5, hasButtons: false, buttonTimeout: 60) == 10)
        #expect(AlertTimeouts.effective(requested: 10.1, defaultTimeout: 5, hasButtons: false, buttonTimeout: 60) == 10)
        #expect(AlertTimeouts.effective(requested: 4, defaultTimeout: 5, hasButtons: true, buttonTimeout: 42) == 42)
        #expect(AlertTimeouts.clamped(1) == 3)
        #expect(AlertTimeouts.clamped(11) == 10)
        #expect(AlertTimeouts.clamped(.nan) == 5)
        #expect(AlertTimeouts.milliseconds(3.2505) == 3251)
    }

    @Test func validity() throws {
        var alert = AlertRequest()
        alert.tertiaryText = "only the third"
        #expect(throws: RuleViolation.invalidData(.text, "an alert needs Text, \(EarshotField.secondaryText.name) or a non-empty Audio (\(EarshotField.tertiaryText.name) alone is not enough)")) {
            try alert.validate()
        }
        alert.secondaryText = "second"
        try alert.validate()

        var spoken = AlertRequest()
        spoken.audio = [SpeechChunk(kind: .text, text: "hello")]
        try spoken.validate()

        var tabbed = AlertRequest()
        tabbed.text = "a\tb"
        #expect(throws: RuleViolation.self) { try tabbed.validate() }
        var blank = AlertRequest()
        blank.text = "   "
        #expect(throws: RuleViolation.invalidData(.text, "must not be whitespace only")) { try blank.validate() }
        var long = AlertRequest()
        long.text = String(repeating: "x", count: 501)
        #expect(throws: RuleViolation.invalidData(.text, "501 characters, at most 500 allowed")) { try long.validate() }
        var negative = AlertRequest()
        negative.text = "t"
        negative.timeoutSeconds = -1
        #expect(throws: RuleViolation.self) { try negative.validate() }
    }

    @Test func softButtonRules() throws {
        var alert = AlertRequest()
        alert.text = "t"
        alert.softButtons = try (1...5).map { try SoftButton(id: UInt16($0), text: "B\($0)", field: "\(EarshotField.softButtons.name)[\($0 - 1)]") }
        #expect(throws: RuleViolation.invalidData(.softButtons, "5 buttons, at most 4 allowed")) { try alert.validate() }
        alert.softButtons = [try SoftButton(id: 1, text: "A", field: "\(EarshotField.softButtons.name)[0]"),
                             try SoftButton(id: 1, text: "B", field: "\(EarshotField.softButtons.name)[1]")]
        #expect(throws: RuleViolation.invalidData("\(EarshotField.softButtons.name)[1].Id", "id 1 is used by an earlier button")) { try alert.validate() }

        #expect(throws: RuleViolation.invalidData("\(EarshotField.softButtons.name)[0].Text", "a TEXT button needs a text")) {
            try SoftButton(id: 1, kind: .text, field: "\(EarshotField.softButtons.name)[0]")
        }
        #expect(throws: RuleViolation.invalidData("\(EarshotField.softButtons.name)[0].Image", "an IMAGE button needs an image path")) {
            try SoftButton(id: 1, text: "x", kind: .image, field: "\(EarshotField.softButtons.name)[0]")
        }
        #expect(try SoftButton(id: 1, image: "/i.png", field: "b").kind == .image)
        #expect(try SoftButton(id: 1, text: "t", image: "/i.png", field: "b").kind == .both)
        #expect(try SoftButton(id: 1, text: "t", field: "b").kind == .text)
    }

    @Test func rateLimitsByPriority() {
        #expect(AlertPriority.allCases.map(\.rateLimit) == [4, 6, 15, 20, 60])
        #expect(AlertPriority.normal < .communication && .navigation < .voicecom && .voicecom < .emergency)
    }
}
