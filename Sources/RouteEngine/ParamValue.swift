/// A typed parameter value, as a resolution hands it to the app.
public enum ParamValue: Hashable, Sendable, CustomStringConvertible {
    case int(Int)
    case string(String)

    public var description: String {
        switch self {
        case .int(let value): String(value)
        case .string(let value): value
        }
    }

    public var json: JSONValue {
        switch self {
        case .int(let value): .int(value)
        case .string(let value): .string(value)
        }
    }
}
