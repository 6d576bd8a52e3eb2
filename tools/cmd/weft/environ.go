package main

import "os"

// environ returns the environment configuration is loaded with. Tests
// replace it to stay independent of the developer's WEFT_ variables.
var environ = os.Environ
