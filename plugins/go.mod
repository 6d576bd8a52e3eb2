module github.com/weftrt/weft/plugins

go 1.26

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/go-plugin v1.8.0
	github.com/stretchr/testify v1.12.1
	github.com/weftrt/weft/core v0.1.0
	github.com/weftrt/weft/drivers/epoll v0.1.0
	github.com/weftrt/weft/schedulers/currentthread v0.1.0
	github.com/weftrt/weft/schedulers/workstealing v0.1.0
	github.com/weftrt/weft/timers/wheel v0.1.0
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.61.0
	google.golang.org/protobuf v1.36.6
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/parsers/json v1.0.1 // indirect
	github.com/knadh/koanf/parsers/toml/v2 v2.1.0 // indirect
	github.com/knadh/koanf/parsers/yaml v1.1.1 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.1 // indirect
	github.com/knadh/koanf/providers/file v1.2.1 // indirect
	github.com/knadh/koanf/v2 v2.4.1 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.17 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/oklog/run v1.1.0 // indirect
	github.com/pelletier/go-toml/v2 v2.2.2 // indirect
	github.com/weftrt/weft/conformance v0.1.0
	github.com/weftrt/weft/drivers/internal v0.1.0 // indirect
	github.com/weftrt/weft/lib v0.1.0
	github.com/weftrt/weft/runtime v0.1.0
	github.com/weftrt/weft/schedulers/internal v0.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.38.0 // indirect
	golang.org/x/sys v0.32.0 // indirect
	golang.org/x/text v0.23.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20231106174013-bbf56f31fb17 // indirect
)

// Sibling modules, so the plugins build and test on their own
// (GOWORK=off). The example imports the epoll driver and the plugin
// scheduler is built on currentthread; only the tests import workstealing
// and the timer.
replace (
	github.com/weftrt/weft/core => ../core
	github.com/weftrt/weft/drivers/epoll => ../drivers/epoll
	github.com/weftrt/weft/schedulers/currentthread => ../schedulers/currentthread
	github.com/weftrt/weft/schedulers/workstealing => ../schedulers/workstealing
	github.com/weftrt/weft/timers/wheel => ../timers/wheel
)

replace github.com/weftrt/weft/drivers/internal => ../drivers/internal

replace github.com/weftrt/weft/schedulers/internal => ../schedulers/internal

replace github.com/weftrt/weft/runtime => ../runtime

replace github.com/weftrt/weft/lib => ../lib

replace github.com/weftrt/weft/conformance => ../conformance
