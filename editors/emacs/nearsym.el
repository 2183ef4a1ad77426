;;; nearsym.el --- Go to symbol in workspace with nearsym, beside eglot  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 the nearsym authors

;; Author: the nearsym authors
;; Maintainer: the nearsym authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, languages
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; eglot runs one server per major mode and project, so an eglot entry for
;; nearsym would replace pyright or pylsp.  This is a small client of its
;; own, on Emacs' built-in jsonrpc, so nearsym runs *beside* eglot:
;;
;; - `nearsym-mode' (global) starts `nearsym serve' per project, sends
;;   didOpen / didChange / didClose for source buffers, and sends
;;   `nearsym/didFocus' whenever the selected window or its buffer changes
;;   (skipping repeats), so the server knows which file you are in.
;; - `M-x nearsym-find-symbol': completing-read in nearsym's order,
;;   re-asking the server as you type.  The candidates are nearsym's
;;   answer as it came: the command gives its completion category its own
;;   pass-through style, so orderless (or any other style) does not
;;   filter them again, and says `identity' as the sort function, which
;;   vertico and the default *Completions* honour.
;; - `M-x nearsym-consult-symbol', when consult is installed: the same
;;   through consult's asynchronous source (throttled, with its input
;;   splitting: "#register#alpha" asks for `register' and narrows by
;;   "alpha" with your completion styles).
;; - An xref backend, so `xref-find-apropos' (C-M-.) lists nearsym's order.
;; - `M-x nearsym-explain': why each result for a query ranks where it
;;   does, every sort key in the order compared, in *nearsym-explain*.
;;
;;   (add-to-list 'load-path "/path/to/nearsym/editors/emacs")
;;   (require 'nearsym)
;;   (nearsym-mode 1)

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'url-util)
(require 'xref)

(defgroup nearsym nil
  "Go to symbol in workspace, nearest first."
  :group 'tools)

(defcustom nearsym-command '("nearsym" "serve")
  "Command that starts the nearsym language server."
  :type '(repeat string))

(defcustom nearsym-initialization-options nil
  "Plist sent as initializationOptions (e.g. (:maxResults 200))."
  :type 'plist)

(defcustom nearsym-modes
  '(python-mode python-ts-mode js-mode js-ts-mode typescript-mode typescript-ts-mode
    tsx-ts-mode go-mode go-ts-mode rust-mode rust-ts-mode java-mode java-ts-mode
    c-mode c-ts-mode c++-mode c++-ts-mode csharp-mode ruby-mode ruby-ts-mode php-mode
    sh-mode bash-ts-mode lua-mode kotlin-mode scala-mode swift-mode elixir-mode
    haskell-mode tuareg-mode zig-mode julia-mode)
  "Major modes whose buffers nearsym is told about."
  :type '(repeat symbol))

(defvar nearsym--connections (make-hash-table :test #'equal)
  "Project root -> running jsonrpc connection.")
(defvar nearsym--last-focus nil "URI last sent with nearsym/didFocus.")
(defvar-local nearsym--version 0)
(defvar-local nearsym--opened nil)
(defvar-local nearsym--change-timer nil)

(defun nearsym--uri (file)
  "The file: URI of FILE."
  (concat "file://" (url-hexify-string (expand-file-name file) url-path-allowed-chars)))

(defcustom nearsym-language-ids
  '((python-base-mode . "python") (python-mode . "python")
    (tsx-ts-mode . "typescriptreact") (typescript-ts-mode . "typescript")
    (typescript-mode . "typescript") (js-jsx-mode . "javascriptreact")
    (js-base-mode . "javascript") (js-mode . "javascript")
    (go-ts-mode . "go") (go-mode . "go") (rust-ts-mode . "rust") (rust-mode . "rust")
    (java-ts-mode . "java") (java-mode . "java") (c++-ts-mode . "cpp") (c++-mode . "cpp")
    (c-ts-mode . "c") (c-mode . "c") (csharp-ts-mode . "csharp") (csharp-mode . "csharp")
    (ruby-ts-mode . "ruby") (ruby-mode . "ruby") (php-mode . "php")
    (bash-ts-mode . "shellscript") (sh-mode . "shellscript") (lua-mode . "lua")
    (kotlin-mode . "kotlin") (scala-mode . "scala") (swift-mode . "swift")
    (elixir-mode . "elixir") (haskell-mode . "haskell") (tuareg-mode . "ocaml")
    (zig-mode . "zig") (julia-mode . "julia"))
  "Major mode -> LSP language identifier sent with didOpen.
The first entry whose mode the buffer's mode is, or derives from, wins.
A mode with none sends its name without \"-mode\" or \"-ts-mode\"."
  :type '(alist :key-type symbol :value-type string))

(defun nearsym--language-id ()
  "The LSP language identifier of the current buffer."
  (or (cdr (cl-find-if (lambda (entry) (derived-mode-p (car entry)))
                       nearsym-language-ids))
      (replace-regexp-in-string "\\(-ts\\)?-mode\\'" "" (symbol-name major-mode))))

(defun nearsym--root ()
  "The current project's root, or `default-directory'."
  (let ((project (project-current)))
    (file-name-as-directory
     (expand-file-name (if project (project-root project) default-directory)))))

(defun nearsym--handle-request (_conn _method _params)
  "Answer the server's requests (none are needed) with null."
  nil)

(defun nearsym--connection (&optional root)
  "The running connection for ROOT (default: this project), started if needed."
  (let* ((root (or root (nearsym--root)))
         (conn (gethash root nearsym--connections)))
    (if (and conn (jsonrpc-running-p conn))
        conn
      (let* ((default-directory root)
             (process (make-process
                       :name (format "nearsym %s" root)
                       :command nearsym-command
                       :connection-type 'pipe
                       :coding 'utf-8-emacs-unix
                       :noquery t
                       :stderr (get-buffer-create " *nearsym stderr*"))))
        (setq conn (make-instance 'jsonrpc-process-connection
                                  :name (format "nearsym %s" root)
                                  :process process
                                  :request-dispatcher #'nearsym--handle-request
                                  :notification-dispatcher #'ignore))
        (jsonrpc-request conn :initialize
                         (list :processId (emacs-pid)
                               :rootUri (nearsym--uri root)
                               :workspaceFolders (vector (list :uri (nearsym--uri root)
                                                               :name root))
                               :initializationOptions (or nearsym-initialization-options
                                                          (make-hash-table))
                               :capabilities (make-hash-table)))
        (jsonrpc-notify conn :initialized (make-hash-table))
        (puthash root conn nearsym--connections)
        conn))))

(defun nearsym--source-buffer-p (&optional buffer)
  "Return non-nil if BUFFER visits a file in one of `nearsym-modes'."
  (with-current-buffer (or buffer (current-buffer))
    (and buffer-file-name (apply #'derived-mode-p nearsym-modes))))

(defun nearsym--did-open ()
  "Tell the server about this buffer's text."
  (when (and (nearsym--source-buffer-p) (not nearsym--opened))
    (setq nearsym--opened t nearsym--version 1)
    (jsonrpc-notify (nearsym--connection) :textDocument/didOpen
                    (list :textDocument
                          (list :uri (nearsym--uri buffer-file-name)
                                :languageId (nearsym--language-id)
                                :version nearsym--version
                                :text (save-restriction
                                        (widen)
                                        (buffer-substring-no-properties
                                         (point-min) (point-max))))))))

(defun nearsym--send-change (buffer)
  "Send BUFFER's whole text (full sync, debounced)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq nearsym--change-timer nil)
      (when nearsym--opened
        (cl-incf nearsym--version)
        (jsonrpc-notify (nearsym--connection) :textDocument/didChange
                        (list :textDocument (list :uri (nearsym--uri buffer-file-name)
                                                  :version nearsym--version)
                              :contentChanges
                              (vector (list :text (save-restriction
                                                    (widen)
                                                    (buffer-substring-no-properties
                                                     (point-min) (point-max)))))))))))

(defun nearsym--after-change (&rest _)
  "Schedule a didChange for this buffer."
  (when nearsym--opened
    (when nearsym--change-timer (cancel-timer nearsym--change-timer))
    (setq nearsym--change-timer
          (run-with-idle-timer 0.1 nil #'nearsym--send-change (current-buffer)))))

(defun nearsym--did-close ()
  "Tell the server this buffer is gone: the file on disk counts again."
  (when nearsym--opened
    (setq nearsym--opened nil)
    (ignore-errors
      (jsonrpc-notify (nearsym--connection) :textDocument/didClose
                      (list :textDocument (list :uri (nearsym--uri buffer-file-name)))))))

(defun nearsym-focus (&rest _)
  "Send nearsym/didFocus for the selected window's buffer, skipping repeats."
  (let ((buffer (window-buffer (selected-window))))
    (when (nearsym--source-buffer-p buffer)
      (with-current-buffer buffer
        (nearsym--did-open)
        (let ((uri (nearsym--uri buffer-file-name)))
          (unless (equal uri nearsym--last-focus)
            (setq nearsym--last-focus uri)
            (jsonrpc-notify (nearsym--connection) :nearsym/didFocus
                            (list :textDocument (list :uri uri)))))))))

(defun nearsym--buffer-setup ()
  "Tell the server about this buffer, and about every edit to it.
Run from `after-change-major-mode-hook' in every buffer."
  (when (nearsym--source-buffer-p)
    (nearsym--did-open)
    (add-hook 'after-change-functions #'nearsym--after-change nil t)
    (add-hook 'kill-buffer-hook #'nearsym--did-close nil t)))

;;;###autoload
(define-minor-mode nearsym-mode
  "Keep nearsym told about your buffers and the one you are in."
  :global t
  (if nearsym-mode
      (progn
        (add-hook 'after-change-major-mode-hook #'nearsym--buffer-setup)
        (add-hook 'window-selection-change-functions #'nearsym-focus)
        (add-hook 'window-buffer-change-functions #'nearsym-focus)
        (add-hook 'xref-backend-functions #'nearsym--xref-backend 90)
        (dolist (buffer (buffer-list))
          (with-current-buffer buffer (nearsym--buffer-setup)))
        (run-with-idle-timer 0 nil #'nearsym-focus))
    (remove-hook 'after-change-major-mode-hook #'nearsym--buffer-setup)
    (remove-hook 'window-selection-change-functions #'nearsym-focus)
    (remove-hook 'window-buffer-change-functions #'nearsym-focus)
    (remove-hook 'xref-backend-functions #'nearsym--xref-backend)))

;;;; Symbols

(defun nearsym-symbols (query)
  "Return the server's answer for QUERY, in its order: a list of plists."
  (let ((conn (nearsym--connection)))
    (nearsym-focus)
    (append (jsonrpc-request conn :workspace/symbol (list :query query)) nil)))

(defun nearsym--file (symbol)
  "The file of SYMBOL (a WorkspaceSymbol plist)."
  (url-unhex-string
   (string-remove-prefix "file://" (plist-get (plist-get symbol :location) :uri))))

(defun nearsym--start (symbol)
  "The start position plist of SYMBOL's range, or nil."
  (plist-get (plist-get (plist-get symbol :location) :range) :start))

(defun nearsym--line (symbol)
  "The 1-based line of SYMBOL."
  (1+ (or (plist-get (nearsym--start symbol) :line) 0)))

(defun nearsym--label (symbol)
  "The label of SYMBOL in a list: container.name  path:line."
  (let ((container (plist-get symbol :containerName)))
    (format "%s%s  %s:%d"
            (if (and (stringp container) (not (string-empty-p container)))
                (concat container ".")
              "")
            (plist-get symbol :name)
            (file-relative-name (nearsym--file symbol) (nearsym--root))
            (nearsym--line symbol))))

(defconst nearsym--kinds
  ["" "file" "module" "namespace" "package" "class" "method" "property" "field"
   "constructor" "enum" "interface" "function" "variable" "constant" "string"
   "number" "boolean" "array" "object" "key" "null" "enum member" "struct"
   "event" "operator" "type parameter"]
  "LSP symbol kinds by number.")

(defun nearsym--kind (symbol)
  "The name of SYMBOL's kind."
  (let ((kind (plist-get symbol :kind)))
    (if (and (integerp kind) (< 0 kind (length nearsym--kinds)))
        (aref nearsym--kinds kind)
      "")))

(defun nearsym--goto (symbol)
  "Visit SYMBOL's definition, at its line and column."
  (xref-push-marker-stack)
  (find-file (nearsym--file symbol))
  (goto-char (point-min))
  (forward-line (1- (nearsym--line symbol)))
  (let ((column (plist-get (nearsym--start symbol) :character)))
    (when (integerp column)
      ;; LSP columns count UTF-16 code units.
      (let ((end (line-end-position)))
        (while (and (> column 0) (< (point) end))
          (setq column (- column (if (> (char-after) #xffff) 2 1)))
          (forward-char 1))))))

;;;; Completion: nearsym's answer, neither filtered nor sorted again

(defvar nearsym--candidates (make-hash-table :test #'equal)
  "Label -> symbol plist, for the labels shown in this completion session.")

(defvar nearsym--last nil
  "The last query asked while completing, and its labels: (QUERY . LABELS).")

(defun nearsym--labels (query)
  "Labels of the server's answer for QUERY, in its order (the last one kept)."
  (if (equal query (car nearsym--last))
      (cdr nearsym--last)
    (let ((labels (mapcar (lambda (symbol)
                            (let ((label (nearsym--label symbol)))
                              (puthash label symbol nearsym--candidates)
                              label))
                          (nearsym-symbols query))))
      (setq nearsym--last (cons query labels))
      labels)))

(defun nearsym--annotate (label)
  "The kind of LABEL's definition, for the completion list."
  (let ((symbol (gethash label nearsym--candidates)))
    (if symbol (concat "  " (nearsym--kind symbol)) "")))

(defun nearsym--table (string pred action)
  "Completion table of definitions: the server's answer for STRING.
PRED filters it; ACTION is as for any programmed completion.  Every
label the server returned for what was typed is a completion of it, in
the server's order; a label counts as a match once it was shown."
  (pcase action
    ('metadata
     '(metadata (category . nearsym-symbol)
                (annotation-function . nearsym--annotate)
                (display-sort-function . identity)
                (cycle-sort-function . identity)))
    ('lambda (and (gethash string nearsym--candidates) t))
    (`(boundaries . ,_) nil)
    ('t (let ((labels (nearsym--labels string)))
          (if pred (seq-filter pred labels) labels)))
    (_ (let ((labels (nearsym--labels string)))
         (cond ((member string labels) t)
               ((= (length labels) 1) (car labels))
               (t string))))))

(defun nearsym--style-try (string table pred point)
  "Completion style `nearsym': try STRING in TABLE with PRED, POINT kept."
  (let ((try (try-completion string table pred)))
    (if (stringp try) (cons try (if (equal try string) point (length try))) try)))

(defun nearsym--style-all (string table pred _point)
  "Completion style `nearsym': all of TABLE's completions of STRING, with PRED.
They are the server's answer as it came: not filtered again."
  (let ((all (all-completions string table pred)))
    (and all (nconc all 0))))

(add-to-list 'completion-styles-alist
             '(nearsym nearsym--style-try nearsym--style-all
                       "The answer of nearsym's server, neither filtered nor sorted."))

(defmacro nearsym--with-own-style (&rest body)
  "Run BODY with completion category `nearsym-symbol' using style `nearsym'.
Whatever styles are set (orderless, flex, basic), candidates of that
category come from the server unfiltered."
  (declare (indent 0) (debug t))
  `(let ((completion-category-overrides
          (cons '(nearsym-symbol (styles nearsym)) completion-category-overrides))
         (nearsym--candidates (make-hash-table :test #'equal))
         (nearsym--last nil))
     ,@body))

;;;###autoload
(defun nearsym-find-symbol ()
  "Pick a definition in nearsym's order; the list follows what you type."
  (interactive)
  (nearsym--with-own-style
    (let ((choice (completing-read "Symbol: " #'nearsym--table nil t)))
      (when-let ((symbol (gethash choice nearsym--candidates)))
        (nearsym--goto symbol)))))

;;;; Explain: why each result ranks where it does

(defun nearsym--key-value (value)
  "VALUE of a sort key, as JSON wrote it."
  (cond ((eq value :json-false) "false")
        ((eq value t) "true")
        (t (format "%s" value))))

;;;###autoload
(defun nearsym-explain (query)
  "Show why each result for QUERY ranks where it does.
The current buffer's file stands for the open file; each result is
followed by its sort keys in the order they are compared, smaller
first (the server's `nearsym.explain' command)."
  (interactive "sExplain the ranking of: ")
  (let* ((conn (nearsym--connection))
         (file (buffer-file-name))
         (answer (jsonrpc-request
                  conn :workspace/executeCommand
                  (list :command "nearsym.explain"
                        :arguments
                        (vector query (if file (nearsym--uri file) :null) 20))))
         (lines (list (format "nearsym.explain %S from %s" query
                              (or (and (stringp (plist-get answer :openFile))
                                       (plist-get answer :openFile))
                                  "no open file"))))
         (n 0))
    (dolist (row (append (plist-get answer :results) nil))
      (push (format "%d. %s" (cl-incf n) (nearsym--label row)) lines)
      (push (concat "   "
                    (mapconcat
                     (lambda (item)
                       (format "%s=%s" (plist-get item :key)
                               (nearsym--key-value (plist-get item :value))))
                     (plist-get row :keys) "  "))
            lines))
    (with-current-buffer (get-buffer-create "*nearsym-explain*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (mapconcat #'identity (nreverse lines) "\n") "\n"))
      (goto-char (point-min))
      (special-mode)
      (display-buffer (current-buffer)))))

(declare-function consult--read "ext:consult")
(declare-function consult--dynamic-collection "ext:consult")

;;;###autoload
(defun nearsym-consult-symbol ()
  "Pick a definition with consult's asynchronous source, in nearsym's order.
The input before consult's separator goes to the server; what follows it
narrows with your completion styles."
  (interactive)
  (unless (require 'consult nil t)
    (user-error "Command `nearsym-consult-symbol' needs consult"))
  (let* ((candidates (make-hash-table :test #'equal))
         (choice
          (consult--read
           (consult--dynamic-collection
            (lambda (input)
              (mapcar (lambda (symbol)
                        (let ((label (nearsym--label symbol)))
                          (puthash label symbol candidates)
                          label))
                      (nearsym-symbols input))))
           :prompt "Symbol: "
           :category 'nearsym-symbol
           :sort nil
           :require-match t)))
    (when-let ((symbol (gethash choice candidates)))
      (nearsym--goto symbol))))

;;;; xref

(defun nearsym--xref-backend ()
  "Return `nearsym' as the xref backend (for `xref-find-apropos')."
  (when nearsym-mode 'nearsym))

(cl-defmethod xref-backend-apropos ((_backend (eql nearsym)) pattern)
  "Return the definitions matching PATTERN, in the server's order."
  (mapcar (lambda (symbol)
            (xref-make (nearsym--label symbol)
                       (xref-make-file-location (nearsym--file symbol)
                                                (nearsym--line symbol) 0)))
          (nearsym-symbols pattern)))

;;;###autoload
(defun nearsym-apropos ()
  "Run `xref-find-apropos' answered by nearsym, even where eglot is the backend.
eglot's backend comes first in its buffers."
  (interactive)
  (let ((xref-backend-functions (list #'nearsym--xref-backend)))
    (call-interactively #'xref-find-apropos)))

(cl-defmethod xref-backend-identifier-at-point ((_backend (eql nearsym)))
  "The symbol at point."
  (thing-at-point 'symbol t))

(provide 'nearsym)
;;; nearsym.el ends here
