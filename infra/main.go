// Command infra is the CDK app of the movie tracing locks stack.
//
// It synthesizes one stack, TracingLocks-<env>, for the environment named by
// the context value "env" (default dev), with that environment's settings
// from cdk.json's "environments". The CDK CLI runs it from cdk.json
// (`cdk synth -c env=prod`); it also runs on its own, without the CLI:
//
//	CDK_OUTDIR=cdk.out CDK_CONTEXT_JSON='{"env":"prod"}' go run ./infra
//
// which is what `make synth ENV=prod` does. The function binaries must have
// been built into build/<name>/bootstrap first (`make build`).
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/infra/stack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		jsii.Close()
		os.Exit(1)
	}
	jsii.Close()
}

func run() error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := stack.FindRoot(wd)
	if err != nil {
		return err
	}
	// cdk.json's context first; what the CLI passes (-c, cdk.context.json)
	// takes precedence over it.
	context, err := stack.LoadContext(root)
	if err != nil {
		return err
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &context})

	envName := "dev"
	if v, ok := app.Node().TryGetContext(jsii.String("env")).(string); ok && v != "" {
		envName = v
	}
	cfg, err := stack.ConfigFor(app.Node().TryGetContext(jsii.String("environments")), envName)
	if err != nil {
		return err
	}
	// make synth/deploy ALARM_EMAIL=... (context alarmEmail) overrides cdk.json.
	if v, ok := app.Node().TryGetContext(jsii.String("alarmEmail")).(string); ok && v != "" {
		cfg.Alarms.Email = v
		if err := cfg.Validate(envName); err != nil {
			return err
		}
	}
	if err := stack.ProductionGuards(envName, cfg); err != nil {
		return err
	}
	assets := filepath.Join(root, "build")
	if _, err := os.Stat(filepath.Join(assets, stack.WebDir, "index.html")); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is missing: run `make web-dist` (or `make synth`, which builds it first)", filepath.Join("build", stack.WebDir))
	}
	for _, name := range stack.Functions {
		if _, err := os.Stat(filepath.Join(assets, name, "bootstrap")); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is missing: run `make build` (or `make synth`, which builds first)",
				filepath.Join("build", name, "bootstrap"))
		}
	}

	for _, bin := range []string{"ffmpeg", "ffprobe"} {
		if _, err := os.Stat(filepath.Join(assets, stack.FFmpegLayerDir, "bin", bin)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is missing: run `make layer` (or `make synth`, which packages it first)",
				filepath.Join("build", stack.FFmpegLayerDir, "bin", bin))
		}
	}

	account, region := cfg.Account, cfg.Region
	if account == "" {
		account = os.Getenv(envvar.CDKDefaultAccount)
	}
	if region == "" {
		region = os.Getenv(envvar.CDKDefaultRegion)
	}
	var env *awscdk.Environment
	if account != "" || region != "" {
		env = &awscdk.Environment{}
		if account != "" {
			env.Account = jsii.String(account)
		}
		if region != "" {
			env.Region = jsii.String(region)
		}
	}

	stack.NewStack(app, stack.StackName(envName), &stack.Props{
		StackProps: awscdk.StackProps{Env: env},
		EnvName:    envName,
		Config:     cfg,
		AssetRoot:  assets,
	})
	stack.ApplyNag(app)
	// The CLI refuses to deploy a stack with error annotations; running
	// without the CLI, fail the same way (cdk-nag reports as errors).
	app.Synth(nil)
	errs, err := stack.Errors(*app.Outdir())
	if err != nil {
		return err
	}
	for _, e := range errs {
		fmt.Fprintf(os.Stderr, "error: %s: %s\n", e.Path, e.Message)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d synthesis error(s)", len(errs))
	}
	return nil
}
