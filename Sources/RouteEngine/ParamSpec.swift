/// The kinds of parameter a destination can declare.
public enum ParamType: String, Hashable, Sendable, CaseIterable {
    case int, string, `enum`, uuid, slug
}

/// A destination's declared parameter: its type and the bounds a value must respect.
public struct ParamSpec: Hashable, Sendable {
    public var type: ParamType
    public var minimum: Int?
    public var maximum: Int?
    public var minimumLength: Int?
    public var maximumLength: Int?
    public var pattern: SafeRegex?
    public var values: [String]?
    public var isOptional: Bool

    public init(
        type: ParamType, minimum: Int? = nil, maximum: Int? = nil, minimumLength: Int? = nil,
        maximumLength: Int? = nil, pattern: SafeRegex? = nil, values: [String]? = nil, isOptional: Bool = false
    ) {
        self.type = type
        self.minimum = minimum
        self.maximum = maximum
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.pattern = pattern
        self.values = values
        self.isOptional = isOptional
    }

    /// Types a value with several path segments (a `*rest` capture, which contains `/`) can fit.
    var acceptsMultipleSegments: Bool { type == .string }

    /// Parses and checks text taken from a link; the failure says why in plain words.
    /// - Complexity: O(n) in the value's length (the pattern is linear-time).
    public func value(fromText text: String) -> Result<ParamValue, ParamFailure> {
        switch type {
        case .int:
            guard let integer = Self.parseCanonicalInt(text) else { return .failure(.notAnInteger) }
            return checkBounds(integer)
        case .string, .slug, .uuid, .enum:
            return check(text)
        }
    }

    /// Checks a value given by a typed in-app request or a route's constant.
    public func value(from value: ParamValue) -> Result<ParamValue, ParamFailure> {
        switch (type, value) {
        case (.int, .int(let integer)): checkBounds(integer)
        case (.int, .string): .failure(.notAnInteger)
        case (_, .string(let text)): check(text)
        case (_, .int): .failure(.notText)
        }
    }

    /// The largest magnitude an `int` param can have, whatever its bounds: 2^53 − 1, so that
    /// every JSON reader (JavaScript's included) reads a resolved value exactly.
    public static let largestInt = 9_007_199_254_740_991

    private func checkBounds(_ integer: Int) -> Result<ParamValue, ParamFailure> {
        if integer < -Self.largestInt { return .failure(.belowMinimum(max(minimum ?? -Self.largestInt, -Self.largestInt))) }
        if integer > Self.largestInt { return .failure(.aboveMaximum(min(maximum ?? Self.largestInt, Self.largestInt))) }
        if let minimum, integer < minimum { return .failure(.belowMinimum(minimum)) }
        if let maximum, integer > maximum { return .failure(.aboveMaximum(maximum)) }
        return .success(.int(integer))
    }

    /// The longest text any param takes, in Unicode scalars: a link's values cannot be
    /// longer (a link is at most 2,048 bytes), and a typed in-app request or a constant is
    /// held to the same bound, so a pattern's match budget (`docs/patterns.md`) covers every
    /// value it is ever given.
    public static let longestText = 2048

    private func check(_ text: String) -> Result<ParamValue, ParamFailure> {
        // A scalar is at least one byte: only a value over the bound in bytes needs counting.
        if text.utf8.count > Self.longestText, text.unicodeScalars.count > Self.longestText {
            return .failure(.tooLong(min(maximumLength ?? Self.longestText, Self.longestText)))
        }
        switch type {
        case .int: return .failure(.notAnInteger)
        case .uuid:
            guard Self.isUUID(text) else { return .failure(.notAUUID) }
        case .enum:
            // By Unicode scalars, as every comparison of the engine: "e" + U+0301 is not "é".
            guard values?.contains(where: { $0.utf8.elementsEqual(text.utf8) }) == true else { return .failure(.notOneOf(values ?? [])) }
        case .slug:
            guard Self.isSlug(text) else { return .failure(.notASlug) }
            fallthrough
        case .string:
            // Length counts Unicode scalars, which every client platform can count the same way.
            if minimumLength != nil || maximumLength != nil {
                let length = text.unicodeScalars.count
                if let minimumLength, length < minimumLength { return .failure(.tooShort(minimumLength)) }
                if let maximumLength, length > maximumLength { return .failure(.tooLong(maximumLength)) }
            }
            if let pattern, !pattern.matches(text) { return .failure(.patternMismatch(pattern.description)) }
        }
        return .success(.string(text))
    }

    /// Decimal digits with an optional leading `-`; no `+`, no leading zeros, no `-0`, no overflow.
    static func parseCanonicalInt(_ text: String) -> Int? {
        var utf8 = Substring(text).utf8[...]
        let isNegative = utf8.first == UInt8(ascii: "-")
        if isNegative { utf8 = utf8.dropFirst() }
        guard let first = utf8.first, utf8.allSatisfy(isDigit) else { return nil }
        if first == UInt8(ascii: "0") && (utf8.count > 1 || isNegative) { return nil }
        return Int(text)
    }

    /// `8-4-4-4-12` hexadecimal digits, either case.
    static func isUUID(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return false }
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard hexValue(byte) != nil else { return false }
            }
        }
        return true
    }

    /// Lowercase ASCII letters and digits in runs joined by single hyphens: `spring-sale-2026`.
    static func isSlug(_ text: String) -> Bool {
        var previousWasHyphen = true
        for byte in text.utf8 {
            if byte == UInt8(ascii: "-") {
                if previousWasHyphen { return false }
                previousWasHyphen = true
            } else if isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) {
                previousWasHyphen = false
            } else {
                return false
            }
        }
        return !previousWasHyphen
    }
}

/// Why a value does not fit its parameter.
public enum ParamFailure: Error, Hashable, Sendable, CustomStringConvertible {
    case notAnInteger
    case notText
    case belowMinimum(Int)
    case aboveMaximum(Int)
    case tooShort(Int)
    case tooLong(Int)
    case patternMismatch(String)
    case notOneOf([String])
    case notAUUID
    case notASlug
    case missing
    /// A captured segment held `%2F`: no param receives a `/` the link's own slashes did not make.
    case encodedSlash

    public var description: String {
        switch self {
        case .notAnInteger: "is not a whole number"
        case .notText: "must be text, not a number"
        case .belowMinimum(let minimum): "is below the minimum \(minimum)"
        case .aboveMaximum(let maximum): "is above the maximum \(maximum)"
        case .tooShort(let length): "is shorter than \(length) characters"
        case .tooLong(let length): "is longer than \(length) characters"
        case .patternMismatch(let pattern): "does not match the pattern \(pattern)"
        case .notOneOf(let values): "is not one of \(values.joined(separator: ", "))"
        case .notAUUID: "is not a UUID"
        case .notASlug: "is not a slug (lowercase letters, digits and single hyphens)"
        case .missing: "is required but missing"
        case .encodedSlash: "contains an encoded slash (%2F), which no param accepts"
        }
    }
}
