/// How an alert's texts fill a display of 0 to 3 lines.
public enum TextLayout {
    public static let separator = " - "

    /// The non-empty texts in order: 3 lines → one each; 2 lines → the first, then the
    /// rest joined with " - "; 1 line → all joined; 0 lines → nothing.
    public static func lines(_ texts: [String], displayLines: Int) -> [String] {
        let present = texts.filter { !$0.isEmpty }
        guard displayLines > 0, !present.isEmpty else { return [] }
        if displayLines == 1 { return [present.joined(separator: separator)] }
        if displayLines == 2 {
            return present.count == 1 ? present : [present[0], present.dropFirst().joined(separator: separator)]
        }
        return present
    }
}
