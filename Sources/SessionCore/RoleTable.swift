/// Which streams the focus policy may lower or silence, by their `media.role`.
///
/// A role is either `media` (ducked and muted by activations that ask for it) or `exempt`
/// (never touched: emergency announcements, screen readers). Roles are compared
/// case-insensitively; a stream without a role, or with one the table does not list, is
/// treated as `*` says.
///
/// The file form (`earshot-session --policy FILE`), one rule a line, `#` starting a comment,
/// changes the standard table: each line sets one role (or `*`, the roles not listed), and
/// every other role stays as the standard table has it:
///
///     Navigation = exempt
///     Radio = media
///     * = media
///
/// `Emergency` is always exempt, whatever a table or file says: emergency audio is never
/// lowered or silenced.
public struct RoleTable: Sendable, Equatable {
    public enum Treatment: String, Sendable, CaseIterable {
        case media, exempt
    }

    /// Lower-cased role → treatment.
    public private(set) var roles: [String: Treatment]
    /// For streams with no role or an unlisted one.
    public private(set) var unlisted: Treatment

    public init(roles: [String: Treatment], unlisted: Treatment) {
        self.roles = Dictionary(roles.map { ($0.key.lowercased(), $0.value) }) { _, last in last }
        self.unlisted = unlisted
    }

    /// The table used without `--policy`: PipeWire's and WirePlumber's media roles are
    /// media; `Emergency` and `Accessibility` are never touched.
    public static let standard = RoleTable(roles: [
        "Music": .media, "Movie": .media, "Game": .media, "Notification": .media, "Communication": .media,
        "Navigation": .media, "Camera": .media, "Screen": .media, "Production": .media, "Test": .media, "DSP": .media,
        "Emergency": .exempt, "Accessibility": .exempt,
    ], unlisted: .media)

    /// The role that is never touched, whatever the table says.
    public static let emergency = "emergency"

    public func treatment(ofRole role: String) -> Treatment {
        if role.lowercased() == Self.emergency { return .exempt }
        return role.isEmpty ? unlisted : roles[role.lowercased()] ?? unlisted
    }

    /// `base` with the rules of a policy file applied; `*` absent keeps `base`'s. A line
    /// making `Emergency` media is refused.
    public static func parse(_ text: String, over base: RoleTable = .standard) throws(RoleTableError) -> RoleTable {
        var roles: [String: Treatment] = [:]
        var unlisted: Treatment?
        var seen: [String: Int] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: " \t\r")
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw RoleTableError(line: number, "'\(trimmed)' is not 'Role = media' or 'Role = exempt'")
            }
            let role = parts[0].trimmingCharacters(in: " \t")
            let word = parts[1].trimmingCharacters(in: " \t")
            guard !role.isEmpty, role.allSatisfy({ $0 == "*" || $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw RoleTableError(line: number, "'\(role)' is not a role name (letters, digits, - _ . or *)")
            }
            guard let treatment = Treatment(rawValue: word.lowercased()) else {
                throw RoleTableError(line: number, "'\(word)' is not media or exempt")
            }
            if let first = seen[role.lowercased()] {
                throw RoleTableError(line: number, "\(role) is already given on line \(first)")
            }
            if role.lowercased() == Self.emergency, treatment != .exempt {
                throw RoleTableError(line: number, "\(role) is always exempt: emergency audio is never lowered or silenced")
            }
            seen[role.lowercased()] = number
            if role == "*" {
                unlisted = treatment
            } else {
                roles[role] = treatment
            }
        }
        var merged = base.roles
        for (role, treatment) in roles { merged[role.lowercased()] = treatment }
        return RoleTable(roles: merged, unlisted: unlisted ?? base.unlisted)
    }

    /// What this table changes of `base`, a phrase a change ("navigation: media → exempt",
    /// "radio: unlisted (media) → exempt", "*: media → exempt"), roles sorted.
    public func changes(from base: RoleTable) -> [String] {
        var changes: [String] = []
        for role in Set(roles.keys).union(base.roles.keys).sorted() where roles[role] != base.roles[role] {
            let before = base.roles[role].map(\.rawValue) ?? "unlisted (\(base.unlisted.rawValue))"
            let after = roles[role].map(\.rawValue) ?? "unlisted (\(unlisted.rawValue))"
            changes.append("\(role): \(before) → \(after)")
        }
        if unlisted != base.unlisted { changes.append("*: \(base.unlisted.rawValue) → \(unlisted.rawValue)") }
        return changes
    }

    /// The table in its file form, roles sorted.
    public var fileText: String {
        roles.keys.sorted().map { "\($0) = \(roles[$0]!.rawValue)" }.joined(separator: "\n") + "\n* = \(unlisted.rawValue)\n"
    }
}

/// A policy file that does not read: the line and what is wrong with it.
public struct RoleTableError: Error, Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let reason: String

    public init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}
