// Package kubernetes holds the manifests of one hashlined per workspace
// (base/, overlays/, examples/); its test renders them with kustomize's
// own Go API, as kubectl kustomize does, and checks the fields a
// deployment depends on.
package kubernetes

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/server"
)

func TestMain(m *testing.M) {
	code := m.Run()
	binarytest.Cleanup()
	os.Exit(code)
}

// The fields of the rendered objects the checks read.
type (
	object struct {
		raw      []byte // the rendered YAML
		Kind     string
		Metadata struct {
			Name   string
			Labels map[string]string
		}
		Data map[string]string
		Spec struct {
			Replicas             *int
			ServiceName          string `json:"serviceName"`
			Template             struct{ Spec podSpec }
			VolumeClaimTemplates []struct{ Metadata struct{ Name string } } `json:"volumeClaimTemplates"`
			podSpec              `json:",inline"`
		}
	}
	podSpec struct {
		TerminationGracePeriodSeconds *int `json:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot *bool `json:"runAsNonRoot"`
			RunAsUser    *int  `json:"runAsUser"`
			FSGroup      *int  `json:"fsGroup"`
		} `json:"securityContext"`
		InitContainers []container `json:"initContainers"`
		Containers     []container
		Volumes        []struct {
			Name   string
			Secret *struct {
				SecretName string `json:"secretName"`
			}
			EmptyDir *struct{} `json:"emptyDir"`
		}
	}
	container struct {
		Name          string
		Image         string
		Args          []string
		RestartPolicy string `json:"restartPolicy"`
		Env           []struct {
			Name      string
			Value     string
			ValueFrom *struct {
				FieldRef *struct {
					FieldPath string `json:"fieldPath"`
				} `json:"fieldRef"`
			} `json:"valueFrom"`
		}
		StartupProbe, ReadinessProbe, LivenessProbe *probe
		Resources                                   struct {
			Requests, Limits map[string]string
		}
		SecurityContext struct {
			RunAsNonRoot             *bool `json:"runAsNonRoot"`
			ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
			AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
			Capabilities             struct{ Drop []string }
		} `json:"securityContext"`
		VolumeMounts []struct {
			Name      string
			MountPath string `json:"mountPath"`
			ReadOnly  bool   `json:"readOnly"`
		} `json:"volumeMounts"`
	}
	probe struct {
		GRPC *struct {
			Port    int
			Service string
		} `json:"grpc"`
	}
)

func render(t *testing.T, dir string) []object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return objects(t, m)
}

func objects(t *testing.T, m resmap.ResMap) []object {
	t.Helper()
	var out []object
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		o.raw = b
		out = append(out, o)
	}
	return out
}

func find(t *testing.T, objs []object, kind string) []object {
	t.Helper()
	var out []object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s rendered", kind)
	}
	return out
}

// flagValue returns the value of --name=value in args.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// checkServer checks the hashlined container of a pod: the flags, the
// workspace name from the label, probes on gRPC health, the volumes it
// needs on their own mounts, a read-only root as a non-root user, and
// resources.
func checkServer(t *testing.T, pod podSpec, c container, claims map[string]bool) {
	t.Helper()
	for flag, want := range map[string]string{"root": "/workspace", "state-dir": "/var/lib/hashline", "listen": "0.0.0.0:7420"} {
		if v, _ := flagValue(c.Args, flag); v != want {
			t.Errorf("--%s = %q, want %q", flag, v, want)
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Errorf("args %v do not start with serve", c.Args)
	}
	named := false
	for _, e := range c.Env {
		if e.Name == "HASHLINED_WORKSPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.labels['hashline.dev/workspace']" {
			named = true
		}
	}
	if !named {
		t.Error("HASHLINED_WORKSPACE does not come from the hashline.dev/workspace label")
	}

	// Probes: gRPC health on the served port, readiness on the service.
	for name, p := range map[string]*probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.GRPC == nil || p.GRPC.Port != 7420 {
			t.Errorf("%s probe %+v is not gRPC health on 7420", name, p)
		}
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.GRPC != nil && c.ReadinessProbe.GRPC.Service != "hashline.v1.FileService" {
		t.Errorf("readiness probes service %q", c.ReadinessProbe.GRPC.Service)
	}

	// Volumes: the workspace and the state on their own volumes, the
	// tokens from a Secret, read-only, and a writable /tmp.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
		if m.MountPath == "/etc/hashline/tokens" && !m.ReadOnly {
			t.Error("the tokens are mounted writable")
		}
	}
	volumes := map[string]bool{}
	secrets := map[string]string{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
		if v.Secret != nil {
			secrets[v.Name] = v.Secret.SecretName
		}
	}
	ws, state := mounts["/workspace"], mounts["/var/lib/hashline"]
	if ws == "" || state == "" || ws == state {
		t.Errorf("workspace on volume %q, state on %q: want two volumes", ws, state)
	}
	for _, v := range []string{ws, state, mounts["/tmp"], mounts["/etc/hashline/tokens"]} {
		if v == "" || (!volumes[v] && !claims[v]) {
			t.Errorf("mount of volume %q: no such volume (mounts %v)", v, mounts)
		}
	}
	tokens, _ := flagValue(c.Args, "tokens")
	if tokVol := mounts[filepath.Dir(tokens)]; secrets[tokVol] == "" {
		t.Errorf("--tokens=%s is not on a Secret volume (mounts %v, secrets %v)", tokens, mounts, secrets)
	}

	// Non-root, read-only root file system, no escalation.
	sc := c.SecurityContext
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) && (pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot) {
		t.Error("runAsNonRoot is not true")
	}
	if u := pod.SecurityContext.RunAsUser; u == nil || *u == 0 {
		t.Errorf("runAsUser %v", u)
	}
	if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("capabilities drop %v, want ALL", sc.Capabilities.Drop)
	}

	// Graceful stop: the kubelet waits longer than hashlined drains.
	grace, _ := flagValue(c.Args, "shutdown-grace")
	d, err := time.ParseDuration(grace)
	if err != nil {
		t.Errorf("--shutdown-grace=%q: %v", grace, err)
	}
	if p := pod.TerminationGracePeriodSeconds; p == nil || time.Duration(*p)*time.Second < d+5*time.Second {
		t.Errorf("terminationGracePeriodSeconds is not --shutdown-grace %s plus 5s to save the snapshots and stop", d)
	}
	if c.Resources.Requests["memory"] == "" || c.Resources.Requests["cpu"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("resources %+v: want memory and cpu requests and a memory limit", c.Resources)
	}
}

// serveFlags are the flags hashlined serve has, from its own help.
func serveFlags(t *testing.T) string {
	t.Helper()
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "help").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// checkFlagsExist checks that every flag and HASHLINED_ variable the
// container gives is one hashlined serve has.
func checkFlagsExist(t *testing.T, help string, c container) {
	t.Helper()
	for _, a := range c.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.Contains(help, "  --"+name+" ") {
			t.Errorf("hashlined serve has no flag --%s", name)
		}
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "HASHLINED_") && !strings.Contains(help, "env "+e.Name+",") && !strings.Contains(help, "env "+e.Name+")") {
			t.Errorf("hashlined serve reads no %s", e.Name)
		}
	}
}

func TestBaseRendersOneServerPerWorkspace(t *testing.T) {
	help := serveFlags(t)
	for _, dir := range []string{"base", "overlays/alpha"} {
		t.Run(dir, func(t *testing.T) {
			objs := render(t, dir)
			sts := find(t, objs, "StatefulSet")
			if len(sts) != 1 {
				t.Fatalf("%d StatefulSets", len(sts))
			}
			s := sts[0]
			if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
				t.Errorf("replicas %v: one engine per workspace", s.Spec.Replicas)
			}
			claims := map[string]bool{}
			for _, c := range s.Spec.VolumeClaimTemplates {
				claims[c.Metadata.Name] = true
			}
			pod := s.Spec.Template.Spec
			if len(pod.Containers) != 1 {
				t.Fatalf("%d containers", len(pod.Containers))
			}
			checkServer(t, pod, pod.Containers[0], claims)
			checkFlagsExist(t, help, pod.Containers[0])
			svc := find(t, objs, "Service")[0]
			if s.Spec.ServiceName != svc.Metadata.Name {
				t.Errorf("serviceName %q, the Service is %q", s.Spec.ServiceName, svc.Metadata.Name)
			}
		})
	}
}

// The overlay of workspace alpha names it everywhere, carries its own
// token Secret (a valid token file, with digests only), and routes its
// host and header to its Service.
func TestOverlayNamesItsWorkspaceAndItsTokens(t *testing.T) {
	objs := render(t, "overlays/alpha")
	s := find(t, objs, "StatefulSet")[0]
	if s.Metadata.Name != "hashlined-alpha" || s.Metadata.Labels["hashline.dev/workspace"] != "alpha" {
		t.Errorf("StatefulSet %q labelled %v", s.Metadata.Name, s.Metadata.Labels)
	}
	secret := find(t, objs, "Secret")[0]
	var mounted string
	for _, v := range s.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			mounted = v.Secret.SecretName
		}
	}
	if mounted != secret.Metadata.Name || !strings.HasPrefix(secret.Metadata.Name, "hashlined-tokens-alpha-") {
		t.Errorf("the pod mounts Secret %q; the overlay makes %q", mounted, secret.Metadata.Name)
	}
	raw, err := os.ReadFile("overlays/alpha/tokens.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.ParseTokens(raw); err != nil {
		t.Errorf("overlays/alpha/tokens.yaml is not a token file hashlined accepts: %v", err)
	}
	if regexp.MustCompile(`(?m)^\s*-?\s*token:`).Match(raw) {
		t.Error("overlays/alpha/tokens.yaml holds a token in clear; keep SHA-256 digests there")
	}
	if _, ok := secret.Data["tokens.yaml"]; !ok {
		t.Errorf("the Secret's keys %v lack tokens.yaml", secret.Data)
	}
	b := find(t, objs, "Ingress")[0].raw
	if !strings.Contains(string(b), "alpha.hashline.test") || !strings.Contains(string(b), "hashlined-alpha") {
		t.Errorf("the Ingress does not route alpha.hashline.test to hashlined-alpha:\n%s", b)
	}
}

func TestSidecarExampleRenders(t *testing.T) {
	objs := render(t, "examples/sidecar")
	pod := find(t, objs, "Pod")[0].Spec.podSpec
	var side *container
	for i, c := range pod.InitContainers {
		if c.Name == "hashlined" {
			side = &pod.InitContainers[i]
		}
	}
	if side == nil || side.RestartPolicy != "Always" {
		t.Fatalf("no native sidecar hashlined (initContainer with restartPolicy Always): %+v", pod.InitContainers)
	}
	checkServer(t, pod, *side, nil)
	checkFlagsExist(t, serveFlags(t), *side)
}
