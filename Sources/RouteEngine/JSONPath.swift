/// The location of a field in a JSON document, written the way people read it:
/// `routes[3].patterns[1]`, `destinations.product.params.id`, `destinations["order-detail"]`.
public struct JSONPath: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let description: String

    /// The whole document.
    public static let root = JSONPath(description: "$")

    private init(description: String) {
        self.description = description
    }

    public func appending(_ key: String) -> JSONPath {
        let isIdentifier = !key.isEmpty && key.utf8.allSatisfy { byte in
            isASCIIAlphanumeric(byte) || byte == UInt8(ascii: "_")
        } && !isDigit(key.utf8.first!)
        let step = isIdentifier ? key : "[" + JSONValue.string(key).serialized() + "]"
        if self == .root { return JSONPath(description: step) }
        return JSONPath(description: description + (isIdentifier ? "." : "") + step)
    }

    public func appending(_ index: Int) -> JSONPath {
        JSONPath(description: (self == .root ? "$" : description) + "[\(index)]")
    }

    public static func + (path: JSONPath, key: String) -> JSONPath { path.appending(key) }
    public static func + (path: JSONPath, index: Int) -> JSONPath { path.appending(index) }

    public static func < (lhs: JSONPath, rhs: JSONPath) -> Bool { lhs.description < rhs.description }
}

@inline(__always) func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
}
