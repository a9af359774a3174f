import Foundation
import WaymarkCLI

var output = Output(echo: true)
let code = CLI.run(Array(CommandLine.arguments.dropFirst()), output: &output)
exit(code.rawValue)
