// Command go-peer is the bench's controller-runtime peer of the aiops operator: a Go
// controller that reconciles AITasks (aiops.example.com/v2, as unstructured objects read
// from controller-runtime's cache) with the same first-reconcile requests as the operator's
// reconcile path, so `npm run bench -- peer` can put the two side by side on one cluster:
//
//  1. add the finalizer (an Update of the cached object);
//  2. on first sight, status phase Pending with Ready Unknown and Reconciling True;
//  3. create the spec's ControllerRevision (AlreadyExists is fine);
//  4. read the target Deployment from the cache and, with --prometheus-url, query the
//     task's trigger.query once;
//  5. write status phase Monitoring with observedGeneration and the Ready/Reconciling
//     conditions, then record one events.k8s.io/v1 Event synchronously (as the operator
//     does), and requeue after intervalSeconds.
//
// Everything else is controller-runtime's defaults: the rest.Config from GetConfig (no
// client-side rate limit), MaxConcurrentReconciles from its flag (default 1), the priority
// queue, /readyz and /healthz on --health-probe-bind-address and /metrics on
// --metrics-bind-address (/readyz once the AITask and Deployment caches have synced, as
// the operator's). It is a benchmark peer, not a product: no spec decisions, no
// actions, no webhook.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const finalizer = "aiops.example.com/finalizer"

var taskGVK = schema.GroupVersionKind{Group: "aiops.example.com", Version: "v2", Kind: "AITask"}

// reconciler holds the manager's cache-backed client and the optional Prometheus URL.
type reconciler struct {
	client     client.Client
	prometheus string
	http       *http.Client
	instance   string
}

func newTask() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(taskGVK)
	return u
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func condition(typ, status, reason, message string, generation int64) map[string]any {
	c := map[string]any{
		"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": now(),
	}
	if generation > 0 {
		c["observedGeneration"] = generation
	}
	return c
}

// Reconcile runs steps 1-5 of the package comment for one AITask.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	task := newTask()
	if err := r.client.Get(ctx, req.NamespacedName, task); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if task.GetDeletionTimestamp() != nil {
		if controllerutil.RemoveFinalizer(task, finalizer) {
			return reconcile.Result{}, client.IgnoreNotFound(r.client.Update(ctx, task))
		}
		return reconcile.Result{}, nil
	}
	if controllerutil.AddFinalizer(task, finalizer) {
		if err := r.client.Update(ctx, task); err != nil {
			return reconcile.Result{}, err
		}
	}
	if phase, _, _ := unstructured.NestedString(task.Object, "status", "phase"); phase == "" {
		msg := "seen by the operator; the first evaluation is under way"
		_ = unstructured.SetNestedField(task.Object, map[string]any{
			"phase": "Pending", "message": msg,
			"conditions": []any{
				condition("Ready", "Unknown", "Progressing", msg, 0),
				condition("Reconciling", "True", "Progressing", msg, 0),
			},
		}, "status")
		if err := r.client.Status().Update(ctx, task); err != nil {
			return reconcile.Result{}, err
		}
	}
	generation := task.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(task.Object, "status", "observedGeneration")
	if observed == generation {
		return r.requeue(task), nil
	}
	if err := r.recordRevision(ctx, task); err != nil {
		return reconcile.Result{}, err
	}
	targetName, _, _ := unstructured.NestedString(task.Object, "spec", "target", "name")
	target := &appsv1.Deployment{}
	reason, message := "Healthy", "metric within threshold"
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: task.GetNamespace(), Name: targetName}, target); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		reason, message = "TargetNotFound", "target Deployment not found"
	} else if r.prometheus != "" {
		query, _, _ := unstructured.NestedString(task.Object, "spec", "trigger", "query")
		if err := r.query(ctx, query); err != nil {
			reason, message = "MetricsUnavailable", err.Error()
		}
	}
	_ = unstructured.SetNestedField(task.Object, map[string]any{
		"phase": "Monitoring", "message": message, "observedGeneration": generation,
		"conditions": []any{
			condition("Ready", "True", reason, message, generation),
			condition("Reconciling", "False", "Evaluated", message, generation),
		},
	}, "status")
	if err := r.client.Status().Update(ctx, task); err != nil {
		return reconcile.Result{}, err
	}
	r.event(ctx, task, reason, message)
	return r.requeue(task), nil
}

func (r *reconciler) requeue(task *unstructured.Unstructured) reconcile.Result {
	secs, found, _ := unstructured.NestedInt64(task.Object, "spec", "intervalSeconds")
	if !found || secs <= 0 {
		secs = 60
	}
	return reconcile.Result{RequeueAfter: time.Duration(secs) * time.Second}
}

// recordRevision creates the ControllerRevision of the task's generation, as api/revisions.ts builds it.
func (r *reconciler) recordRevision(ctx context.Context, task *unstructured.Unstructured) error {
	spec, _, _ := unstructured.NestedMap(task.Object, "spec")
	gen := fmt.Sprint(task.GetGeneration())
	rev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"metadata": map[string]any{
			"name": fmt.Sprintf("%s-g%s", task.GetName(), gen), "namespace": task.GetNamespace(),
			"labels":      map[string]any{"aiops.example.com/aitask-uid": string(task.GetUID()), "aiops.example.com/generation": gen},
			"annotations": map[string]any{"aiops.example.com/generation": gen, "aiops.example.com/aitask": task.GetName()},
			"ownerReferences": []any{map[string]any{
				"apiVersion": task.GetAPIVersion(), "kind": task.GetKind(), "name": task.GetName(),
				"uid": string(task.GetUID()), "controller": true, "blockOwnerDeletion": false,
			}},
		},
		"data": spec, "revision": task.GetGeneration(),
	}}
	if err := r.client.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// query asks Prometheus for `q` once (5 s timeout) and reads the answer.
func (r *reconciler) query(ctx context.Context, q string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.prometheus+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return err
	}
	res, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("prometheus: HTTP %d", res.StatusCode)
	}
	return nil
}

// event writes one events.k8s.io/v1 Event about the task and waits for it; a failure is ignored.
func (r *reconciler) event(ctx context.Context, task *unstructured.Unstructured, reason, note string) {
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: task.GetName() + "." + hex.EncodeToString(suffix), Namespace: task.GetNamespace()},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "aiops.example.com/go-peer",
		ReportingInstance:   r.instance,
		Action:              "Evaluate",
		Reason:              reason,
		Type:                "Normal",
		Note:                note,
		Regarding: corev1.ObjectReference{
			APIVersion: task.GetAPIVersion(), Kind: task.GetKind(), Name: task.GetName(),
			Namespace: task.GetNamespace(), UID: task.GetUID(),
		},
	}
	_ = r.client.Create(ctx, ev)
}

func main() {
	var namespace, metricsAddr, probeAddr, prometheus string
	var workers int
	var leaderElect bool
	flag.StringVar(&namespace, "namespace", "", "the one namespace to watch (default: all)")
	flag.IntVar(&workers, "max-concurrent-reconciles", 1, "reconcile workers")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of /metrics (0 = off)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of /readyz and /healthz")
	flag.StringVar(&prometheus, "prometheus-url", "", "Prometheus to query once per evaluation (default: none)")
	flag.BoolVar(&leaderElect, "leader-elect", false, "take a Lease before reconciling")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	cacheOpts := cache.Options{}
	if namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Client:                  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "aiops-go-peer",
		LeaderElectionNamespace: namespace,
	})
	if err != nil {
		fail(err)
	}
	host, _ := os.Hostname()
	r := &reconciler{
		client: mgr.GetClient(), prometheus: strings.TrimRight(prometheus, "/"),
		http: &http.Client{}, instance: host,
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(newTask()).
		Named("aitask").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r); err != nil {
		fail(err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		fail(err)
	}
	// Ready once the AITask and Deployment informers have synced, as the operator's /readyz.
	if err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
		for _, obj := range []client.Object{newTask(), &appsv1.Deployment{}} {
			inf, err := mgr.GetCache().GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				return err
			}
			if !inf.HasSynced() {
				return fmt.Errorf("caches not synced")
			}
		}
		return nil
	}); err != nil {
		fail(err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
